//! Reading Parquet tables back in tests, with the parquet crate alone.

use std::path::Path;

/// The rows of a Parquet file, each as a JSON object of its columns (read with the parquet
/// crate's own reader, no DuckDB needed; a BINARY value is an array of its bytes).
pub fn rows(file: &Path) -> Vec<serde_json::Map<String, serde_json::Value>> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, field)| {
                    let v = match field {
                        Field::Null => serde_json::Value::Null,
                        Field::Bool(b) => serde_json::json!(b),
                        Field::Long(n) => serde_json::json!(n),
                        Field::Str(s) => serde_json::json!(s),
                        Field::Bytes(b) => serde_json::json!(b.data()),
                        other => panic!("{}: unexpected field {other:?}", file.display()),
                    };
                    (name.clone(), v)
                })
                .collect()
        })
        .collect()
}
