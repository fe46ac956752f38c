fn main() {
    std::process::exit(lift::cli::main());
}
