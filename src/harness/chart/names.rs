//! Human-readable benchmark names, as the paper prints them; the programs
//! the paper wrote for its AMD GPU say "AMD version", since they run on
//! whatever device is measured (issue 21).

/// The paper's name for a benchmark (`nbody-nvidia` -> `N-Body (NVIDIA)`);
/// names it does not know are shown as they are.
pub fn display_name(benchmark: &str) -> String {
    let known = match benchmark {
        "nbody-nvidia" => "N-Body (NVIDIA)",
        "nbody-amd" => "N-Body (AMD version)",
        "md" => "MD",
        "kmeans" => "K-Means",
        "nn" => "NN",
        "mri-q" => "MRI-Q",
        "convolution" => "Convolution",
        "atax" => "ATAX",
        "gemv" => "GEMV",
        "gesummv" => "GESUMMV",
        "mm-amd" => "MM (AMD version)",
        "mm-nvidia" => "MM (NVIDIA)",
        other => return other.to_string(),
    };
    known.to_string()
}
