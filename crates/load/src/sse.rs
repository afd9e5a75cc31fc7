//! The chat and confirm answers, read whole: `event: NAME` / `data: JSON` frames.

use serde_json::Value;

/// The frames of an event stream as (event, data); a frame whose data is not JSON is kept with
/// `Value::Null`, so the caller sees that it came and can call it an error.
pub fn events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|frame| {
            let mut event = None;
            let mut data = None;
            for line in frame.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_owned());
                } else if let Some(json) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str(json).unwrap_or(Value::Null));
                }
            }
            Some((event?, data.unwrap_or(Value::Null)))
        })
        .collect()
}

/// The data of the first frame of the event `name`.
pub fn first<'a>(events: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|(event, _)| event == name)
        .map(|(_, data)| data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_read_in_order_and_comments_skipped() {
        let text = ": keep-alive\n\nevent: token\ndata: {\"delta\":\"hi\"}\n\nevent: turn_end\ndata: {\"status\":\"ok\"}\n\nevent: error\ndata: not json\n\n";
        let read = events(text);
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].1["delta"], "hi");
        assert_eq!(first(&read, "turn_end").unwrap()["status"], "ok");
        assert_eq!(first(&read, "error"), Some(&Value::Null));
        assert!(first(&read, "confirm_request").is_none());
    }
}
