//! JSON-RPC's own errors for lines the MCP session cannot take, answered before they reach it.
//!
//! The session reads one JSON-RPC message a line. A line that is not JSON gets `-32700` (parse
//! error) with a `null` id, one that is not a request object `-32600`, and a request of a method
//! we serve whose `params` do not have that method's shape `-32602` (invalid params) — where the
//! session on its own would drop the line, or answer `-32601` (method not found) for a method it
//! has. Everything else passes through untouched, and the session's answers are written whole,
//! one line each, between ours.

use rmcp::model::{CallToolRequestParams, InitializeRequestParams, PaginatedRequestParams};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream},
    sync::mpsc,
};

/// The longest line read; a longer one is answered as unparsable.
pub const MAX_LINE: usize = 4 * 1024 * 1024;

/// What to do with one line from the client: pass it on, or answer it here.
pub fn check(line: &str) -> Option<Value> {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => return Some(error(&Value::Null, -32700, &format!("parse error: {e}"))),
    };
    let Some(message) = value.as_object() else {
        return Some(error(
            &Value::Null,
            -32600,
            "invalid request: a message is a JSON object",
        ));
    };
    // Responses and notifications are never answered; only requests have a method and an id.
    let (Some(method), Some(id)) = (message.get("method").and_then(Value::as_str), message.get("id")) else {
        return None;
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let problem = match method {
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "tools/list" if !params.is_null() => serde_json::from_value::<PaginatedRequestParams>(params).err(),
        _ => None,
    }?;
    Some(error(
        id,
        -32602,
        &format!("invalid params for {method}: {problem}"),
    ))
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The session's side of the filter: what it reads and where it writes.
pub type SessionIo = (DuplexStream, DuplexStream);

/// Runs the filter between `input`/`output` (stdin and stdout) and a session, which is handed
/// the returned pair to serve on. Ends when the client closes `input` and the session's output
/// is drained.
pub fn filter(
    input: impl AsyncRead + Unpin + Send + 'static,
    mut output: impl AsyncWrite + Unpin + Send + 'static,
) -> SessionIo {
    let (mut to_session, session_reads) = tokio::io::duplex(64 * 1024);
    let (session_writes, from_session) = tokio::io::duplex(64 * 1024);
    let (lines, mut outgoing) = mpsc::channel::<String>(64);

    let answers = lines.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = String::new();
        loop {
            line.clear();
            match read_line(&mut input, &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.trim_end_matches(['\r', '\n']);
            if text.trim().is_empty() {
                continue;
            }
            if let Some(answer) = check(text) {
                if answers.send(answer.to_string()).await.is_err() {
                    break;
                }
            } else {
                let forwarded = to_session.write_all(text.as_bytes()).await;
                if forwarded.is_err() || to_session.write_all(b"\n").await.is_err() {
                    break;
                }
            }
        }
        // Dropping `to_session` tells the session the client has gone.
    });

    tokio::spawn(async move {
        let mut from_session = BufReader::new(from_session).lines();
        while let Ok(Some(line)) = from_session.next_line().await {
            if lines.send(line).await.is_err() {
                break;
            }
        }
    });

    tokio::spawn(async move {
        while let Some(line) = outgoing.recv().await {
            let written = async {
                output.write_all(line.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
    });

    (session_reads, session_writes)
}

/// One line into `line`, at most [`MAX_LINE`] bytes of it kept (the rest read and dropped, so a
/// huge line is answered as unparsable instead of filling memory). The bytes read, 0 at the end.
async fn read_line<R: AsyncBufReadExt + Unpin>(input: &mut R, line: &mut String) -> std::io::Result<usize> {
    let mut bytes = Vec::new();
    let mut total = 0;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            break;
        }
        let (taken, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        let room = MAX_LINE.saturating_sub(bytes.len()).min(taken);
        bytes.extend_from_slice(buffer.get(..room).unwrap_or_default());
        input.consume(taken);
        total += taken;
        if done {
            break;
        }
    }
    *line = String::from_utf8_lossy(&bytes).into_owned();
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_line_gets_the_error_json_rpc_names() {
        let junk = check("this is not json").unwrap();
        assert_eq!(junk["error"]["code"], -32700);
        assert_eq!(junk["id"], Value::Null);
        assert_eq!(check("[1, 2]").unwrap()["error"]["code"], -32600);
        let bad =
            check(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}"#).unwrap();
        assert_eq!(bad["error"]["code"], -32602);
        assert_eq!(bad["id"], 7);
        let bad = check(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":"x"}"#).unwrap();
        assert_eq!(bad["error"]["code"], -32602);
        // Good requests, notifications and unknown methods pass (the session answers -32601).
        for fine in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_accounts","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#,
        ] {
            assert_eq!(check(fine), None, "{fine}");
        }
    }
}
