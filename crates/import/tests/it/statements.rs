//! Every statement of the corpus (`../shared/corpus/statements/`, one folder per format) is taken
//! for the format its folder names, by its content alone, and — until that format's reader lands —
//! refused with a sentence naming the format and the evidence. Skipped, saying so, without the
//! corpus.

use kakeibo_import::{CamtMessage, ImportError, OfxSyntax, ParseOptions, StatementFormat, parse, sniff};

/// The format a corpus file is, from its folder (and, for camt, its message number).
fn expected(folder: &str, name: &str) -> StatementFormat {
    match folder {
        "ofx1" | "qfx" => StatementFormat::Ofx {
            syntax: OfxSyntax::Sgml,
        },
        "ofx2" => StatementFormat::Ofx {
            syntax: OfxSyntax::Xml,
        },
        "qif" => StatementFormat::Qif,
        "mt940" if name.contains("mt942") => StatementFormat::Mt942,
        "mt940" => StatementFormat::Mt940,
        "camt" => {
            let message = if name.contains("052") {
                CamtMessage::AccountReport
            } else if name.contains("054") {
                CamtMessage::Notification
            } else {
                CamtMessage::Statement
            };
            let version = ["v2", "v4", "v8"]
                .iter()
                .find(|v| name.contains(&format!(".{v}.")) || name.ends_with(&format!(".{v}.xml")))
                .map(|v| v.trim_start_matches('v').parse().unwrap())
                // The files with no version in their name are 053.001.02.
                .or(Some(2));
            StatementFormat::Camt { message, version }
        }
        other => panic!("a corpus folder this test does not know: {other}"),
    }
}

#[test]
fn every_corpus_statement_is_known_by_its_content_and_read_by_its_reader() {
    let Some(root) = kakeibo_testkit::corpus_dir("statements", "the format sniff over the statements corpus")
    else {
        return;
    };
    let mut seen = 0;
    let mut wrong = Vec::new();
    for folder in std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
    {
        let folder_name = folder.file_name().unwrap().to_string_lossy().into_owned();
        for file in std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()) {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&file).unwrap();
            let sniffed = sniff(&bytes);
            let want = expected(&folder_name, &name);
            if sniffed.format != want {
                wrong.push(format!(
                    "{folder_name}/{name}: {:?} ({}), expected {want:?}",
                    sniffed.format, sniffed.why
                ));
            }
            // The same bytes under another name are the same format: nothing reads the name. Every
            // statement format is read (each reader's corpus test checks what); an XML document
            // that is no statement is refused in words.
            if sniffed.format != StatementFormat::OtherXml {
                match parse(&bytes, &ParseOptions::default()) {
                    Ok(parsed) => assert!(parsed.format.statement.is_some(), "{name}"),
                    Err(
                        ImportError::Statement(_)
                        | ImportError::SeveralStatements { .. }
                        | ImportError::Dates(_),
                    ) => {}
                    Err(other) => panic!("{name}: {other}"),
                }
                seen += 1;
                continue;
            }
            let refusal = parse(&bytes, &ParseOptions::default()).unwrap_err();
            assert!(
                matches!(refusal, ImportError::NotRead { format, .. } if format == sniffed.format),
                "{name}: {refusal}"
            );
            assert!(refusal.to_string().contains("not a bank statement"), "{refusal}");
            seen += 1;
        }
    }
    println!(
        "statements corpus: {seen} files, {} taken for another format",
        wrong.len()
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        seen >= 28,
        "the corpus holds 28 statements; {seen} read from {}",
        root.display()
    );
}

#[test]
fn a_statement_renamed_or_not_is_what_its_bytes_say() {
    let ofx = b"OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1></BANKMSGSRSV1></OFX>\n";
    let refusal = parse(ofx, &ParseOptions::default()).unwrap_err().to_string();
    assert_eq!(
        refusal,
        "the OFX file holds no bank, card or investment statement"
    );
    let csv = b"date,description,amount\n2025-01-01,Coffee,-3.50\n";
    assert_eq!(parse(csv, &ParseOptions::default()).unwrap().rows.len(), 1);
}

proptest::proptest! {
    /// Any bytes, and any text shaped like the marks the sniff looks for, are some format: the
    /// sniff never panics, and what it calls delimited text is what the CSV reader gets.
    #[test]
    fn the_sniff_takes_any_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..4096)) {
        let _ = sniff(&bytes);
    }

    #[test]
    fn the_sniff_takes_any_text_shaped_like_a_statement(
        text in "(OFXHEADER|<\\?OFX|<OFX>|<\\?xml|urn:iso:std:iso:20022:tech:xsd:camt\\.05[0-9]\\.00?1?\\.?[0-9]?|:20:|:25:|:60F:|:34F:|!Type:|\\{2:O94|[ -~\\n\\u{feff}\\u{1}])*"
    ) {
        let sniffed = sniff(text.as_bytes());
        proptest::prop_assert!(!sniffed.why.is_empty());
    }
}
