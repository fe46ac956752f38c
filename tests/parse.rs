use lift::ir::SourceFile;
use lift::parse::{parse_program, print_program};

fn load(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn scratch() {
    for f in ["examples/dot.lift", "examples/transpose.lift", "examples/scal.lift", "examples/jacobi1d.lift"] {
        let src = SourceFile::new(f, load(f));
        let p = parse_program(&src).map_err(|e| e.render(&src)).unwrap();
        let printed = print_program(&p);
        println!("{printed}");
        let p2 = parse_program(&SourceFile::new("re", printed.clone())).map_err(|e| e.to_string()).unwrap();
        assert_eq!(print_program(&p2), printed);
    }
}
