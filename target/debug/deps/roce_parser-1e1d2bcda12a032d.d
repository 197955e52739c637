/work/main/target/debug/deps/roce_parser-1e1d2bcda12a032d.d: parser/src/lib.rs parser/src/bytes.rs parser/src/error.rs parser/src/problems.rs

/work/main/target/debug/deps/libroce_parser-1e1d2bcda12a032d.rlib: parser/src/lib.rs parser/src/bytes.rs parser/src/error.rs parser/src/problems.rs

/work/main/target/debug/deps/libroce_parser-1e1d2bcda12a032d.rmeta: parser/src/lib.rs parser/src/bytes.rs parser/src/error.rs parser/src/problems.rs

parser/src/lib.rs:
parser/src/bytes.rs:
parser/src/error.rs:
parser/src/problems.rs:
