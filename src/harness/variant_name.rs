//! The variants a results row can name, as a type: parsed from and printed
//! to exactly the strings of `results.csv`'s `variant` column.

use std::fmt;

/// The suffix of a row's host-timed twin (`reference@host`, `all@host`).
pub const HOST_TWIN: &str = "@host";

/// The peers' names, as their runners claim them and rows spell them
/// ([`Variant::Peer`]).
pub const CLBLAST: &str = "clblast";
pub const CUBLAS: &str = "cublas";
pub const HALIDE: &str = "halide";

/// A Lift optimisation level: which of the compiler's optional passes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// No optimisation.
    None,
    /// Barrier elimination.
    Barrier,
    /// Barrier elimination and control-flow simplification.
    BarrierCf,
    /// Both, plus array-access simplification.
    All,
}

impl Level {
    /// Every level, in chart order.
    pub const ALL: [Level; 4] = [Level::None, Level::Barrier, Level::BarrierCf, Level::All];

    /// The spelling of configs, `--variants` and `results.csv`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Barrier => "barrier",
            Level::BarrierCf => "barrier+cf",
            Level::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// What the device's own explored program is called in a suite's rows:
/// `lift-tuned` for the stencils (CGO 2018, whose figures count it among
/// the Lift variants), `explored` elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    Explored,
    LiftTuned,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Explored => "explored",
            Family::LiftTuned => "lift-tuned",
        }
    }

    fn parse(s: &str) -> Option<Family> {
        [Family::Explored, Family::LiftTuned].into_iter().find(|f| f.as_str() == s)
    }
}

/// Which program a row measured (or, for [`Variant::ExploredOther`], which
/// rows a run asks for).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// The hand-written OpenCL reference.
    Reference,
    /// The config's Lift program at one optimisation level.
    Level(Level),
    /// A named Lift program of the config (`lift-<name>`), built at `all`;
    /// the payload is the part after `lift-`.
    Named(String),
    /// The program explored for the device the run is on.
    Explored(Family),
    /// Another device's explored program run on this one (`<family>@<slug>`).
    OtherDevice(Family, String),
    /// A request only, never a row: every other device's explored program.
    ExploredOther,
    /// A peer beside Lift (a library or another compiler), by the name its
    /// runner claims (`clblast`, `cublas`, `halide`).
    Peer(String),
    /// The same runs as the inner variant, timed on the host (`<v>@host`).
    HostTwin(Box<Variant>),
}

/// The request that asks for [`Variant::OtherDevice`] rows.
const EXPLORED_OTHER: &str = "explored-other";

impl Variant {
    /// Parses a `variant` cell or a `--variants` word. Every non-empty word
    /// of letters, digits, `-`, `+`, `_`, `.` and `@` names some variant (a
    /// peer where no other form fits); whether a runner claims it is the
    /// registry's question (`super::runners`).
    pub fn parse(s: &str) -> Option<Variant> {
        if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || "-+_.@".contains(c)) {
            return None;
        }
        if let Some(inner) = s.strip_suffix(HOST_TWIN).filter(|i| !i.is_empty()) {
            return Some(Variant::HostTwin(Box::new(Variant::parse(inner)?)));
        }
        if let Some((family, slug)) = s.split_once('@') {
            return match Family::parse(family) {
                Some(f) if !slug.is_empty() && !slug.contains('@') => {
                    Some(Variant::OtherDevice(f, slug.to_string()))
                }
                _ => None,
            };
        }
        Some(match s {
            "reference" => Variant::Reference,
            EXPLORED_OTHER => Variant::ExploredOther,
            _ => match (Level::parse(s), Family::parse(s)) {
                (Some(l), _) => Variant::Level(l),
                (_, Some(f)) => Variant::Explored(f),
                _ if is_named(s) => Variant::Named(s["lift-".len()..].to_string()),
                _ => Variant::Peer(s.to_string()),
            },
        })
    }

    /// The host-timed twin of this variant.
    pub fn twin(&self) -> Variant {
        Variant::HostTwin(Box::new(self.clone()))
    }

    /// Whether this is a host-timed twin.
    pub fn is_twin(&self) -> bool {
        matches!(self, Variant::HostTwin(_))
    }

    /// Whether the row ran another device's program: compared with this
    /// device's rows, not with a peer, so it gets no host-timed twin.
    pub fn is_other_device(&self) -> bool {
        matches!(self, Variant::OtherDevice(..))
    }

    pub fn is_peer(&self) -> bool {
        matches!(self, Variant::Peer(_))
    }

    /// The peer of that name ([`CLBLAST`], [`CUBLAS`], [`HALIDE`]).
    pub fn peer(name: &str) -> Variant {
        Variant::Peer(name.to_string())
    }

    /// Whether this is the peer of that name (not its host-timed twin).
    pub fn is_peer_named(&self, name: &str) -> bool {
        matches!(self, Variant::Peer(p) if p == name)
    }

    /// Whether this is a Lift program spelled `lift-<name>` and run on this
    /// device: a config's named program or the stencils' explored
    /// `lift-tuned` (the CGO 2018 figures' Lift bars), not a host-timed twin
    /// nor another device's program.
    pub fn is_lift_named(&self) -> bool {
        matches!(self, Variant::Named(_) | Variant::Explored(Family::LiftTuned))
    }

    /// The variant a host-timed twin is of; any other variant itself.
    pub fn untwinned(&self) -> &Variant {
        match self {
            Variant::HostTwin(inner) => inner.untwinned(),
            other => other,
        }
    }
}

impl serde::Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Variant {
    /// Every `results.csv` cell the harness writes parses; anything else
    /// is an error naming the cell rather than a row no table would find.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
        let s = String::deserialize(d)?;
        Variant::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown variant `{s}`")))
    }
}

/// Whether `v` may name a named Lift variant: `lift-` and a lowercase name.
pub fn is_named(v: &str) -> bool {
    v.strip_prefix("lift-").is_some_and(|r| {
        !r.is_empty() && r.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

impl fmt::Display for Variant {
    /// The `results.csv` spelling; widths and alignment apply (`{:<11}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Variant::Reference => "reference".to_string(),
            Variant::Level(l) => l.as_str().to_string(),
            Variant::Named(n) => format!("lift-{n}"),
            Variant::Explored(fam) => fam.as_str().to_string(),
            Variant::OtherDevice(fam, slug) => format!("{}@{slug}", fam.as_str()),
            Variant::ExploredOther => EXPLORED_OTHER.to_string(),
            Variant::Peer(p) => p.clone(),
            Variant::HostTwin(v) => format!("{v}{HOST_TWIN}"),
        };
        f.pad(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_prints_as_it_was_read() {
        for s in [
            "reference",
            "none",
            "barrier",
            "barrier+cf",
            "all",
            "lift-derived",
            "lift-tuned",
            "explored",
            "explored@nvidia-h100-80gb-hbm3",
            "lift-tuned@pthread-haswell-amd-epyc",
            "explored-other",
            "clblast",
            "reference@host",
            "explored@host",
            "barrier+cf@host",
        ] {
            let v = Variant::parse(s).unwrap_or_else(|| panic!("{s} parses"));
            assert_eq!(v.to_string(), s);
        }
        assert_eq!(Variant::parse("lift-tuned"), Some(Variant::Explored(Family::LiftTuned)));
        assert_eq!(Variant::parse("all@host"), Some(Variant::Level(Level::All).twin()));
        assert_eq!(Variant::parse("lift-x2"), Some(Variant::Named("x2".into())));
        assert_eq!(Variant::parse("halide"), Some(Variant::Peer("halide".into())));
        assert!(Variant::parse("explored@nvidia-h100-80gb-hbm3").unwrap().is_other_device());
        for bad in ["", "a b", "x,y", "explored@", "lift@x", "@host"] {
            assert_eq!(Variant::parse(bad), None, "{bad}");
        }
        assert_eq!(format!("[{:<6}]", Variant::Level(Level::All)), "[all   ]");
    }

    #[test]
    fn peers_and_lift_programs_are_told_apart_by_kind() {
        let v = |s: &str| Variant::parse(s).unwrap();
        assert!(v("halide").is_peer_named(HALIDE) && !v("halide@host").is_peer_named(HALIDE));
        assert_eq!(Variant::peer(CLBLAST), v("clblast"));
        for lift in ["lift-naive", "lift-tuned"] {
            assert!(v(lift).is_lift_named(), "{lift}");
        }
        for other in ["lift-tuned@host", "lift-tuned@gpu-x", "explored", "reference", "all"] {
            assert!(!v(other).is_lift_named(), "{other}");
        }
        assert_eq!(v("explored@host").untwinned(), &v("explored"));
        assert_eq!(v("all").untwinned(), &v("all"));
    }
}
