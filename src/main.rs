// mimalloc (lift::alloc) instead of the system allocator: the compiler's arithmetic
// builds and drops many small expression trees, and malloc/free were about
// 40% of its instructions (docs/ARCHITECTURE.md, "Compile time").
#[global_allocator]
static ALLOC: lift::alloc::MiMalloc = lift::alloc::MiMalloc;

fn main() {
    std::process::exit(lift::cli::main());
}
