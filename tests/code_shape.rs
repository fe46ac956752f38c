//! Issue 22's shape goals, kept from coming back: no non-test function in
//! `src/` longer than [`MAX_LINES`] lines or taking more than
//! [`MAX_PARAMS`] parameters (group them in a struct), and no
//! `Result<_, String>` in the layers whose errors are typed.

use std::path::{Path, PathBuf};

use syn::visit::Visit;

const MAX_LINES: usize = 120;
const MAX_PARAMS: usize = 6;

/// Every `.rs` file under `dir`, sorted so failures list in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// Whether `attrs` mark test-only code: `#[cfg(test)]` or `#[test]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test")))
    })
}

/// Collects the functions of one file that break a shape rule.
struct Shapes<'a> {
    file: &'a Path,
    offenders: Vec<String>,
}

impl Shapes<'_> {
    fn check(&mut self, name: &syn::Ident, sig: &syn::Signature, span: proc_macro2::Span) {
        let lines = span.end().line - span.start().line + 1;
        let params = sig.inputs.len();
        let at = format!("{}:{} fn {name}", self.file.display(), span.start().line);
        if lines > MAX_LINES {
            self.offenders.push(format!("{at}: {lines} lines (at most {MAX_LINES})"));
        }
        if params > MAX_PARAMS {
            self.offenders.push(format!("{at}: {params} parameters (at most {MAX_PARAMS})"));
        }
    }
}

/// From the `fn` keyword to the body's closing brace: doc comments and
/// attributes above a function are not its length.
fn extent(sig: &syn::Signature, body: &syn::Block) -> proc_macro2::Span {
    let start = sig.fn_token.span;
    start.join(body.brace_token.span.close()).unwrap_or(start)
}

impl<'ast> Visit<'ast> for Shapes<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.check(&f.sig.ident, &f.sig, extent(&f.sig, &f.block));
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.check(&f.sig.ident, &f.sig, extent(&f.sig, &f.block));
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = f.default.as_ref().filter(|_| !is_test(&f.attrs)) {
            self.check(&f.sig.ident, &f.sig, extent(&f.sig, body));
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
}

#[test]
fn no_function_is_too_long_or_takes_too_many_parameters() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for file in rust_files(&root.join("src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let rel = file.strip_prefix(root).unwrap();
        let mut shapes = Shapes { file: rel, offenders: Vec::new() };
        shapes.visit_file(&ast);
        offenders.extend(shapes.offenders);
    }
    assert!(offenders.is_empty(), "functions to split or to give a struct:\n{}", offenders.join("\n"));
}
