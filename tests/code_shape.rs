//! Issue 22's shape goals, kept from coming back: no non-test function in
//! `src/` longer than [`MAX_LINES`] lines or taking more than
//! [`MAX_PARAMS`] parameters (group them in a struct), and no
//! `Result<_, String>` in non-test code: every layer's errors are typed
//! (docs/ARCHITECTURE.md, "Error types").

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

/// From the `fn` keyword to the body's closing brace: doc comments and
/// attributes above a function are not its length.
fn extent(sig: &syn::Signature, body: &syn::Block) -> proc_macro2::Span {
    let start = sig.fn_token.span;
    start.join(body.brace_token.span.close()).unwrap_or(start)
}

/// Whether `ty` is the path `String` (or `std::string::String`).
fn is_string(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "String"))
}

/// What one file's non-test code breaks: functions of the wrong shape,
/// and `Result<_, String>` types (a string error loses the data the
/// renderer needs).
struct Scan<'a> {
    file: &'a Path,
    shapes: Vec<String>,
    string_errors: Vec<String>,
}

impl Scan<'_> {
    fn check(&mut self, sig: &syn::Signature, span: proc_macro2::Span) {
        let lines = span.end().line - span.start().line + 1;
        let params = sig.inputs.len();
        let at = format!("{}:{} fn {}", self.file.display(), span.start().line, sig.ident);
        if lines > MAX_LINES {
            self.shapes.push(format!("{at}: {lines} lines (at most {MAX_LINES})"));
        }
        if params > MAX_PARAMS {
            self.shapes.push(format!("{at}: {params} parameters (at most {MAX_PARAMS})"));
        }
    }
}

impl<'ast> Visit<'ast> for Scan<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            self.check(&f.sig, extent(&f.sig, &f.block));
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            self.check(&f.sig, extent(&f.sig, &f.block));
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = f.default.as_ref().filter(|_| !is_test(&f.attrs)) {
            self.check(&f.sig, extent(&f.sig, body));
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
    fn visit_path_segment(&mut self, seg: &'ast syn::PathSegment) {
        if let (true, syn::PathArguments::AngleBracketed(args)) = (seg.ident == "Result", &seg.arguments) {
            let types: Vec<_> = args
                .args
                .iter()
                .filter_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            if types.len() == 2 && is_string(types[1]) {
                self.string_errors.push(format!("{}:{}", self.file.display(), seg.ident.span().start().line));
            }
        }
        syn::visit::visit_path_segment(self, seg);
    }
}

/// Every file of `src/`, scanned: (shape findings, string-error findings).
fn scan_src() -> (Vec<String>, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let (mut shapes, mut string_errors) = (Vec::new(), Vec::new());
    for file in rust_files(&src) {
        let text = std::fs::read_to_string(&file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut scan =
            Scan { file: file.strip_prefix(root).unwrap(), shapes: Vec::new(), string_errors: Vec::new() };
        scan.visit_file(&ast);
        shapes.extend(scan.shapes);
        string_errors.extend(scan.string_errors);
    }
    (shapes, string_errors)
}

#[test]
fn no_function_is_too_long_or_takes_too_many_parameters() {
    let (shapes, _) = scan_src();
    assert!(shapes.is_empty(), "functions to split or to give a struct:\n{}", shapes.join("\n"));
}

#[test]
fn no_string_errors() {
    let (_, found) = scan_src();
    assert!(found.is_empty(), "Result<_, String> (type the error):\n{}", found.join("\n"));
}
