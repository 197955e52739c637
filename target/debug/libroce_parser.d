/work/main/target/debug/libroce_parser.rlib: /work/main/parser/src/bytes.rs /work/main/parser/src/error.rs /work/main/parser/src/lib.rs /work/main/parser/src/problems.rs
