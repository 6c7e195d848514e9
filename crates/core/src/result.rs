//! Tool call results as switchboard carries them: MCP content blocks, structured content and the
//! error flag. A tool's failure is data here, never a Rust error.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One content block of a tool result (MCP wire shape).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A base64 image.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Base64 audio.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the model may read later.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// Its name.
        #[serde(default)]
        name: String,
        /// Description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// An embedded resource (text or base64 blob).
    Resource {
        /// `{uri, mimeType?, text?}` or `{uri, mimeType?, blob}` as sent.
        resource: Value,
    },
}

/// The outcome of a `tools/call` that reached the server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// Content blocks in server order.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured content, when the tool declares or sends one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The server flagged the result as an error.
    #[serde(default)]
    pub is_error: bool,
}

impl CallResult {
    /// A result holding one text block.
    pub fn text(text: impl Into<String>, is_error: bool) -> Self {
        Self {
            content: vec![ContentBlock::Text { text: text.into() }],
            structured_content: None,
            is_error,
        }
    }

    /// All text blocks joined by newlines.
    pub fn joined_text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
