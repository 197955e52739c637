//! The JSON contract (docs/json.md) is what the commands write: every output of `dissect
//! --format json|jsonl`, `stats --format json`, `check --format json`, `rules --format json`
//! and `check --write-expect`, on every capture in pcaps/ (and on the real captures when
//! ROCE_INSPECT_REAL_CAPTURES names them), validates against the JSON Schema files of
//! docs/schema/, which forbid members they do not list. The schemas' enums of problem codes
//! and rule IDs are the parser's and the catalog's.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "../../testdata/real.rs"]
mod real;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schema(name: &str) -> (Value, jsonschema::Validator) {
    let path = root().join("docs/schema").join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&value)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (value, validator)
}

struct Schemas {
    frame: jsonschema::Validator,
    stats: jsonschema::Validator,
    check: jsonschema::Validator,
    expect: jsonschema::Validator,
    diagnose: jsonschema::Validator,
}

fn schemas() -> Schemas {
    Schemas {
        frame: schema("frame").1,
        stats: schema("stats").1,
        check: schema("check").1,
        expect: schema("expect").1,
        diagnose: schema("diagnose").1,
    }
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> =
        v.iter_errors(doc).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not follow its schema:\n{}", errors.join("\n"));
}

fn run(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-inspect")).args(args).output().unwrap();
    // check exits 1 when it finds an error: still a document.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(bytes: &[u8], what: &str) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"))
}

/// Every command's JSON on one capture; returns the number of documents validated.
fn validate_capture(s: &Schemas, path: &Path) -> usize {
    let p = path.to_str().unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    let mut n = 0;
    let jsonl = run(&["dissect", "--format", "jsonl", p]);
    let lines: Vec<Value> = jsonl
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| json(l, &format!("{name} dissect jsonl line {}", i + 1)))
        .collect();
    for (i, line) in lines.iter().enumerate() {
        assert_valid(&s.frame, line, &format!("{name} dissect --format jsonl line {}", i + 1));
        n += 1;
    }
    let array = json(&run(&["dissect", "--format", "json", p]), &format!("{name} dissect json"));
    assert_eq!(array.as_array().unwrap(), &lines, "{name}: json and jsonl hold other frames");
    for (what, args, v) in [
        ("stats", ["stats", "--format", "json"], &s.stats),
        ("check", ["check", "--format", "json"], &s.check),
    ] {
        let doc = json(&run(&[args[0], args[1], args[2], p]), &format!("{name} {what}"));
        assert_valid(v, &doc, &format!("{name} {what} --format json"));
        if what == "check" {
            findings_name_their_rules_side(&doc, &name);
        }
        // A window and a filter add `window` and `selection`, in the schema too.
        let narrowed = [args[0], args[1], args[2], "-c", "30", "--frames", "2-", "-Y", "bth", p];
        let doc = json(&run(&narrowed), &format!("{name} {what} -c --frames -Y"));
        assert_valid(v, &doc, &format!("{name} {what} --format json -c 30 --frames 2- -Y bth"));
        assert_eq!(doc["window"], serde_json::json!({"frames": "2-", "count": 30}), "{name}");
        assert_eq!(doc["selection"]["filter"], "bth", "{name}");
        n += 2;
    }
    let doc = json(&run(&["diagnose", "--format", "json", p]), &format!("{name} diagnose"));
    assert_valid(&s.diagnose, &doc, &format!("{name} diagnose --format json"));
    diagnosis_counts_its_verdicts(&doc, &name);
    n += 1;
    let expect = std::env::temp_dir()
        .join(format!("roce-inspect-schema-{}-{name}.expect.json", std::process::id()));
    run(&["check", "--write-expect", expect.to_str().unwrap(), p]);
    let doc = json(&std::fs::read(&expect).unwrap(), &format!("{name} --write-expect"));
    assert_valid(&s.expect, &doc, &format!("{name} check --write-expect"));
    std::fs::remove_file(&expect).unwrap();
    n + 1
}

fn shipped_captures() -> Vec<PathBuf> {
    let mut v = vec![root().join("pcaps/sample.pcap")];
    let mut suite: Vec<PathBuf> = std::fs::read_dir(root().join("pcaps/conformance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    suite.sort();
    assert!(suite.len() >= 20, "the conformance suite is missing");
    v.extend(suite);
    v
}

#[test]
fn every_output_on_every_shipped_capture_follows_the_schemas() {
    let s = schemas();
    let mut docs = 0;
    for path in shipped_captures() {
        docs += validate_capture(&s, &path);
    }
    // The committed expect files and golden outputs too.
    for e in std::fs::read_dir(root().join("pcaps/conformance")).unwrap() {
        let path = e.unwrap().path();
        if path.to_string_lossy().ends_with(".expect.json") {
            let doc = json(&std::fs::read(&path).unwrap(), &path.display().to_string());
            assert_valid(&s.expect, &doc, &path.display().to_string());
            docs += 1;
        }
    }
    let stats = json(&std::fs::read(root().join("pcaps/sample.stats.json")).unwrap(), "golden");
    assert_valid(&s.stats, &stats, "pcaps/sample.stats.json");
    println!("{docs} documents validated");
    assert!(docs > 500, "only {docs} documents");
}

#[test]
fn every_output_on_every_real_capture_follows_the_schemas() {
    let Some(dir) = real::real_dir() else { return };
    let s = schemas();
    let mut docs = 0;
    let mut caps: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    caps.sort();
    assert!(caps.len() >= 20, "{}: too few captures", dir.display());
    for path in &caps {
        docs += validate_capture(&s, path);
    }
    println!("{docs} documents validated on {} real captures", caps.len());
}

/// The schemas forbid what they do not list: a renamed member, a number where the contract
/// says "0x…", a problem as a sentence, are all refused (the validation above can fail).
#[test]
fn the_schemas_refuse_what_the_contract_does_not_say() {
    let s = schemas();
    let sample = root().join("pcaps/sample.pcap");
    let out = run(&["dissect", "--format", "jsonl", sample.to_str().unwrap()]);
    let frames: Vec<Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let cm = frames.iter().find(|f| f["roce"]["cm"].is_object()).unwrap().clone();
    let write = frames.iter().find(|f| f["roce"]["reth"].is_object()).unwrap().clone();
    assert!(s.frame.is_valid(&cm) && s.frame.is_valid(&write));
    type Patch = fn(&mut Value);
    let patches: [(&str, Value, Patch); 7] = [
        ("dqpn instead of dest_qp", write.clone(), |f| {
            let b = f["roce"]["bth"].as_object_mut().unwrap();
            let q = b.remove("dest_qp").unwrap();
            b.insert("dqpn".into(), q);
        }),
        ("a VA as a number", write.clone(), |f| f["roce"]["reth"]["va"] = 4096.into()),
        ("a GUID without its leading zeros", cm.clone(), |f| {
            f["roce"]["cm"]["transaction_id"] = "0xd101b5b9".into()
        }),
        ("a member the contract lacks", cm.clone(), |f| {
            f["roce"]["cm"]["surprise"] = 1.into();
        }),
        ("a problem as a sentence", write.clone(), |f| {
            f["problems"] = serde_json::json!(["pad bytes are not zero"]);
        }),
        ("an unknown problem code", write.clone(), |f| {
            f["problems"] = serde_json::json!([{"code": "pad_non_zero", "message": "x"}]);
        }),
        ("a timestamp as a number", write, |f| f["ts"] = 1767225600000083000u64.into()),
    ];
    for (what, mut doc, patch) in patches {
        patch(&mut doc);
        assert!(!s.frame.is_valid(&doc), "the frame schema accepts {what}");
    }
    let stats = run(&["stats", "--format", "json", sample.to_str().unwrap()]);
    let mut stats: Value = serde_json::from_slice(&stats).unwrap();
    assert!(s.stats.is_valid(&stats));
    stats["connections"][0]["retransmitted_psns"] = 3.into();
    assert!(!s.stats.is_valid(&stats), "the stats schema accepts retransmitted_psns");
    let nic = root().join("testdata/nic-counters");
    let (b, a) = (nic.join("before.txt"), nic.join("after-disagree.txt"));
    let args = ["stats", "--format", "json", sample.to_str().unwrap(), "--nic-counters"];
    let mut args: Vec<&str> = args.to_vec();
    args.extend([b.to_str().unwrap(), a.to_str().unwrap(), "--nic-host", "10.0.0.2"]);
    let mut stats: Value = serde_json::from_slice(&run(&args)).unwrap();
    assert!(stats["nic_counters"]["counters"].as_array().is_some_and(|c| c.len() == 10));
    assert_valid(&s.stats, &stats, "stats --nic-counters");
    stats["nic_counters"]["counters"][0]["verdict"] = "maybe".into();
    assert!(!s.stats.is_valid(&stats), "the stats schema accepts a verdict maybe");
    stats["nic_counters"]["counters"][0]["verdict"] = "agree".into();
    assert_valid(&s.stats, &stats, "stats --nic-counters, verdict agree");
    stats["nic_counters"]["counters"][0]["drivers"] = serde_json::json!(["mlx4"]);
    assert!(!s.stats.is_valid(&stats), "the stats schema accepts a driver mlx4");
    // Every driver's snapshots (rxe's rdma statistic line, bnxt_re, irdma) validate too.
    for (b, a, host) in [
        ("rxe-before.txt", "rxe-after.txt", "10.0.0.2"),
        ("rxe-sysfs-before.txt", "rxe-sysfs-after.txt", "10.0.0.1"),
        ("bnxt_re-before.txt", "bnxt_re-after.txt", "10.0.0.2"),
        ("irdma-before.txt", "irdma-after.txt", "10.0.0.1"),
    ] {
        let (b, a) = (nic.join(b), nic.join(a));
        let mut args = vec!["stats", "--format", "json", sample.to_str().unwrap()];
        args.extend(["--nic-counters", b.to_str().unwrap(), a.to_str().unwrap()]);
        args.extend(["--nic-host", host]);
        let doc: Value = serde_json::from_slice(&run(&args)).unwrap();
        assert!(doc["nic_counters"]["counters"].as_array().is_some_and(|c| c.len() >= 15));
        assert_valid(&s.stats, &doc, "stats --nic-counters of another driver");
    }
    let diag = run(&["diagnose", "--format", "json", sample.to_str().unwrap()]);
    let diag: Value = serde_json::from_slice(&diag).unwrap();
    assert_valid(&s.diagnose, &diag, "diagnose on the sample");
    let patches: [(&str, Patch); 4] = [
        ("an unknown verdict", |d| d["connections"][0]["verdicts"][0]["verdict"] = "weird".into()),
        ("evidence another verdict's", |d| {
            d["connections"][0]["verdicts"][0]["evidence"]["goodput_bps"] = 1.into()
        }),
        ("a QPN as a string", |d| d["connections"][0]["connection"]["qpn_a"] = "0xdc1".into()),
        ("a verdict without its next step", |d| {
            d["connections"][0]["verdicts"][0].as_object_mut().unwrap().remove("next");
        }),
    ];
    for (what, patch) in patches {
        let mut d = diag.clone();
        patch(&mut d);
        assert!(!s.diagnose.is_valid(&d), "the diagnose schema accepts {what}");
    }
}
/// `verdicts` counts the verdicts given, each verdict's severity is its kind's, and every
/// connection has at least one verdict (`healthy` alone when nothing is wrong).
fn diagnosis_counts_its_verdicts(doc: &Value, name: &str) {
    let mut counted = std::collections::BTreeMap::<String, u64>::new();
    let all = doc["connections"].as_array().unwrap().iter().chain(doc["setup"].as_array().unwrap());
    for c in all {
        for v in c["verdicts"].as_array().unwrap() {
            *counted.entry(v["verdict"].as_str().unwrap().to_string()).or_default() += 1;
            let kind = roce_analysis::VERDICTS.iter().find(|k| k.1 == v["verdict"]).unwrap();
            assert_eq!(v["severity"], serde_json::to_value(kind.3).unwrap(), "{name}");
        }
    }
    let given: std::collections::BTreeMap<String, u64> =
        serde_json::from_value(doc["verdicts"].clone()).unwrap();
    assert_eq!(given, counted, "{name}: verdicts counts");
}

/// A finding's `side` is its rule's side in the catalog, and `summary.by_rule` counts the
/// findings listed (with none suppressed, exactly).
fn findings_name_their_rules_side(doc: &Value, name: &str) {
    let findings = doc["findings"].as_array().unwrap();
    for f in findings {
        let rule = roce_conformance::find_rule(f["rule"].as_str().unwrap()).unwrap();
        let side = serde_json::to_value(rule.side).unwrap();
        assert_eq!(f["side"], side, "{name}: {} has the side of its rule", f["rule"]);
    }
    if doc["summary"]["suppressed"] == 0 {
        for c in doc["summary"]["by_rule"].as_array().unwrap() {
            let listed = findings.iter().filter(|f| f["rule"] == c["rule"]).count() as u64;
            let counted = c["errors"].as_u64().unwrap() + c["warnings"].as_u64().unwrap();
            assert_eq!(listed, counted, "{name}: summary.by_rule of {}", c["rule"]);
        }
    }
}

/// `rules --format json` is the catalog, as its schema says.
#[test]
fn rules_json_is_the_catalog() {
    let (_, v) = schema("rules");
    let doc = json(&run(&["rules", "--format", "json"]), "rules --format json");
    assert_valid(&v, &doc, "rules --format json");
    let ids: Vec<&str> =
        doc["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let want: Vec<&str> = roce_conformance::RULES.iter().map(|r| r.id).collect();
    assert_eq!(ids, want);
}

/// The enums of the schemas are the code's: every problem code, every rule ID.
#[test]
fn the_schemas_enums_are_the_codes_of_the_parser_and_the_catalog() {
    let (frame, _) = schema("frame");
    let codes: Vec<&str> = frame["$defs"]["problem_code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let want: Vec<&str> = roce_parser::Problem::ALL.iter().map(|p| p.code()).collect();
    assert_eq!(codes, want, "docs/schema/frame.schema.json: problem codes are not the parser's");
    let (stats, _) = schema("stats");
    assert_eq!(
        stats["properties"]["problems"]["items"]["properties"]["code"]["enum"],
        frame["$defs"]["problem_code"]["enum"],
        "docs/schema/stats.schema.json: problem codes"
    );
    let ids: Vec<&str> = roce_conformance::RULES.iter().map(|r| r.id).collect();
    let (check, _) = schema("check");
    let (expect, _) = schema("expect");
    for (name, rules) in [
        ("check", &check["$defs"]["rule"]["enum"]),
        ("expect", &expect["properties"]["findings"]["items"]["properties"]["rule"]["enum"]),
        ("rules", &schema("rules").0["$defs"]["rule"]["enum"]),
    ] {
        let got: Vec<&str> =
            rules.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(got, ids, "docs/schema/{name}.schema.json: rule IDs are not the catalog's");
    }
    // Every document names its schema, and the schema says the same.
    for (name, id) in [
        ("frame", roce_conformance::internal::json::SCHEMA_FRAME),
        ("stats", roce_conformance::internal::json::SCHEMA_STATS),
        ("check", roce_conformance::internal::json::SCHEMA_CHECK),
        ("expect", roce_conformance::internal::json::SCHEMA_EXPECT),
        ("rules", roce_conformance::internal::json::SCHEMA_RULES),
    ] {
        assert_eq!(schema(name).0["properties"]["schema"]["const"], id, "{name}");
    }
    let sides: Vec<Value> = [
        roce_conformance::Side::Capture,
        roce_conformance::Side::Sender,
        roce_conformance::Side::Requester,
        roce_conformance::Side::Responder,
        roce_conformance::Side::NotificationPoint,
        roce_conformance::Side::Checker,
    ]
    .iter()
    .map(|s| serde_json::to_value(s).unwrap())
    .collect();
    assert_eq!(check["$defs"]["side"]["enum"].as_array().unwrap(), &sides, "check: sides");
}

/// `stats`, `check` and `diagnose` of several taps (`taps` with copies, latency, drops and
/// the `CAP-DROP-BETWEEN` findings) follow their schemas: the sample and a copy of it 3 us late
/// with one packet lost on the way.
#[test]
fn several_taps_follow_the_schemas() {
    let s = schemas();
    let sample = root().join("pcaps/sample.pcap");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let late = dir.join("schema-tap-b.pcap");
    // The sample (nanosecond pcap, big-endian) with every record 3 us later and frame 20 gone.
    let bytes = std::fs::read(&sample).unwrap();
    let be = bytes[..4] == [0xa1, 0xb2, 0x3c, 0x4d];
    assert!(be, "pcaps/sample.pcap is a big-endian nanosecond pcap");
    let (mut out, mut at, mut n) = (bytes[..24].to_vec(), 24, 0);
    while at + 16 <= bytes.len() {
        let word = |i: usize| u32::from_be_bytes(bytes[at + i..at + i + 4].try_into().unwrap());
        let caplen = word(8) as usize;
        n += 1;
        let ts = u64::from(word(0)) * 1_000_000_000 + u64::from(word(4)) + 3_000;
        if n != 20 {
            out.extend_from_slice(&((ts / 1_000_000_000) as u32).to_be_bytes());
            out.extend_from_slice(&((ts % 1_000_000_000) as u32).to_be_bytes());
            out.extend_from_slice(&bytes[at + 8..at + 16 + caplen]);
        }
        at += 16 + caplen;
    }
    std::fs::write(&late, out).unwrap();
    let (a, b) = (sample.to_str().unwrap(), late.to_str().unwrap());
    let stats = json(&run(&["stats", "--format", "json", a, b]), "stats of two taps");
    assert_valid(&s.stats, &stats, "stats of two taps");
    assert_eq!(stats["taps"]["drops"], 1, "{}", stats["taps"]);
    // The loss is listed under its connection, as check lists it.
    assert!(stats["taps"]["drops_listed"][0]["connection"].is_object(), "{}", stats["taps"]);
    let check = json(&run(&["check", "--format", "json", a, b]), "check of two taps");
    assert_valid(&s.check, &check, "check of two taps");
    let drop =
        check["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "CAP-DROP-BETWEEN");
    assert!(drop.is_some_and(|f| f["connection"].is_object()), "{check}");
    assert!(check["taps"]["drops_listed"][0]["connection"].is_object(), "{}", check["taps"]);
    assert_eq!(stats["taps"]["drops_listed"], check["taps"]["drops_listed"]);
    let diagnose = json(&run(&["diagnose", "--format", "json", a, b]), "diagnose of two taps");
    assert_valid(&s.diagnose, &diagnose, "diagnose of two taps");
    // The same taps; each cites the frames of its own findings or verdicts.
    let without_cited = |d: &Value| {
        let mut t = d["taps"].clone();
        t.as_object_mut().unwrap().remove("frames_cited");
        t
    };
    assert_eq!(without_cited(&diagnose), without_cited(&check));
    assert!(diagnose["taps"]["frames_cited"].as_array().is_some_and(|c| !c.is_empty()));
}
