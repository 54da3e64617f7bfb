//! The interpreter's cfgs (`PyPy`, `Py_3_10`, `Py_LIMITED_API`, ...) for this crate's own
//! code, as PyO3 sets them for its own: `text.rs` borrows a `str`'s UTF-8 bytes through a
//! function PyO3 declares only where the stable ABI has it.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
