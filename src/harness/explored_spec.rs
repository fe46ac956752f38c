//! `explored:` of a config, as written and once checked: the committed
//! device programs and how each kernel of the program runs. Apart from the
//! runner (`explored`) so that the config loader, which checks the section,
//! does not import the code that runs it.

use super::config_problem::{ConfigProblem as P, SpecError};
use crate::arith::{parse_arith, ArithExpr};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the device folders live, relative to the repository root.
pub const EXPLORED_DIR: &str = "benchmarks/explored";

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExploredKernel {
    #[serde(default)]
    program: Option<String>,
    def: RawDefs,
    #[serde(default)]
    args: BTreeMap<String, String>,
    output: String,
    #[serde(default)]
    static_sizes: bool,
    #[serde(default)]
    global: Option<Vec<String>>,
    #[serde(default)]
    local: Option<Vec<String>>,
}

/// A kernel's def, or alternatives tried in order (`[sumPartialsTree,
/// sumPartials]`: the first whose size constraints hold for this run's
/// sizes, as `lift explore --then A,B` chooses).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum RawDefs {
    One(String),
    Alternatives(Vec<String>),
}

/// `explored:` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExplored {
    /// The file name in each device folder (default `<benchmark>.lift`).
    #[serde(default)]
    file: Option<String>,
    kernels: Vec<RawExploredKernel>,
    output: String,
    /// How to explore the program where none is committed (`search`).
    #[serde(default)]
    pub(crate) explore: Option<super::search_spec::RawSearch>,
}

/// One kernel of the explored program.
#[derive(Clone, Debug)]
pub struct ExploredKernel {
    /// A fixed program; `None`: the device's file.
    pub program: Option<PathBuf>,
    /// The def, or alternatives: the first whose size constraints hold.
    pub defs: Vec<String>,
    /// Def parameter -> input, buffer or intermediate name.
    pub args: BTreeMap<String, String>,
    pub output: String,
    pub static_sizes: bool,
    pub global: Option<Vec<ArithExpr>>,
    pub local: Option<Vec<ArithExpr>>,
}

/// The checked section.
#[derive(Clone, Debug)]
pub struct ExploredSpec {
    /// `<root>/benchmarks/explored`.
    pub dir: PathBuf,
    /// The file name inside a device folder.
    pub file: String,
    pub kernels: Vec<ExploredKernel>,
    /// The buffer validated.
    pub output: String,
    /// How `lift run` explores a device without a committed program
    /// (`explored.explore:`); `None`: it does not.
    pub search: Option<super::search_spec::SearchSpec>,
}

impl ExploredSpec {
    /// The slugs of the devices with a committed program, sorted.
    pub fn committed_slugs(&self) -> Vec<String> {
        let mut slugs: Vec<String> = std::fs::read_dir(&self.dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        slugs.retain(|s| self.program_for(s).is_file());
        slugs.sort();
        slugs
    }

    /// The program committed for the device with this slug (it may not exist).
    pub fn program_for(&self, slug: &str) -> PathBuf {
        self.dir.join(slug).join(&self.file)
    }
}

/// The local size a `best.lift` header gives (`// Launch it with local
/// size 32,4 ...`, as `lift explore` writes it).
pub fn header_local(text: &str) -> Option<Vec<i64>> {
    let rest = text
        .lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix("// Launch it with local size "))?;
    rest.split_whitespace().next()?.split(',').map(|x| x.parse().ok()).collect()
}

/// The `program:` paths of `explored.kernels` with their keys (checked by
/// the config loader to stay inside the repository root).
pub(crate) fn program_paths(raw: &RawExplored) -> Vec<(String, String)> {
    raw.kernels
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.program.clone().map(|p| (format!("explored.kernels[{i}].program"), p)))
        .collect()
}

/// Checks `explored:`.
pub(crate) fn parse_spec(
    raw: &RawExplored,
    benchmark: &str,
    root: &Path,
    is_array: &dyn Fn(&str) -> bool,
) -> Result<ExploredSpec, SpecError> {
    let file = raw.file.clone().unwrap_or_else(|| format!("{benchmark}.lift"));
    if file.contains('/') || !file.ends_with(".lift") {
        let what = "a file name ending in .lift";
        return Err(SpecError::new("explored.file", P::Expected { found: file, what }));
    }
    if raw.kernels.is_empty() {
        return Err(SpecError::new("explored.kernels", P::Needed { what: "kernel" }));
    }
    let mut produced: Vec<String> = Vec::new();
    let mut kernels = Vec::new();
    for (i, k) in raw.kernels.iter().enumerate() {
        let key = format!("explored.kernels[{i}]");
        let program = match &k.program {
            None => None,
            Some(p) => {
                let path = if root == Path::new(".") { PathBuf::from(p) } else { root.join(p) };
                if !path.is_file() {
                    return Err(SpecError::new(
                        format!("{key}.program"),
                        P::ProgramNotFound { path: p.clone() },
                    ));
                }
                Some(path)
            }
        };
        for (p, a) in &k.args {
            if !is_array(a) && !produced.contains(a) {
                let what = "an input, buffer or earlier kernel's output";
                return Err(SpecError::new(format!("{key}.args.{p}"), P::Not { found: a.clone(), what }));
            }
        }
        if !is_array(&k.output) {
            produced.push(k.output.clone());
        }
        let exprs = |what: &str, v: &Option<Vec<String>>| -> Result<Option<Vec<ArithExpr>>, SpecError> {
            v.as_ref()
                .map(|es| {
                    es.iter()
                        .map(|e| {
                            parse_arith(e).map_err(|error| {
                                SpecError::new(format!("{key}.{what}"), P::BadExpression { error })
                            })
                        })
                        .collect()
                })
                .transpose()
        };
        kernels.push(ExploredKernel {
            program,
            defs: match &k.def {
                RawDefs::One(d) => vec![d.clone()],
                RawDefs::Alternatives(ds) if !ds.is_empty() => ds.clone(),
                RawDefs::Alternatives(_) => return Err(SpecError::new(format!("{key}.def"), P::NoDefs)),
            },
            args: k.args.clone(),
            output: k.output.clone(),
            static_sizes: k.static_sizes,
            global: exprs("global", &k.global)?,
            local: exprs("local", &k.local)?,
        });
    }
    if kernels.iter().all(|k| k.program.is_some()) {
        return Err(SpecError::new("explored.kernels", P::NoDeviceKernel));
    }
    if !is_array(&raw.output) {
        return Err(SpecError::new(
            "explored.output",
            P::Not { found: raw.output.clone(), what: "a buffer" },
        ));
    }
    // Keep paths short in messages when running from the repository root.
    let dir = if root == Path::new(".") { PathBuf::from(EXPLORED_DIR) } else { root.join(EXPLORED_DIR) };
    Ok(ExploredSpec { dir, file, kernels, output: raw.output.clone(), search: None })
}
