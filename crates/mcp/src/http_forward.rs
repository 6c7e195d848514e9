//! The methods of rmcp's `StreamableHttpClient` that a client wrapping another only passes on:
//! `post_message` and `post_message_with_max_sse_event_size` go to
//! `post_message_with_response_limits`, and `get_stream` to
//! `get_stream_with_max_sse_event_size`, with rmcp's default limits where none is given. Each
//! wrapper (`OAuthHttp`, `ScreenedHttp`, `HelperHttp`) writes only the two that do its work.

/// The pass-on methods, inside an `impl StreamableHttpClient` whose error type is `$error`.
macro_rules! forward_to_limits {
    ($error:ty) => {
        async fn post_message(
            &self,
            uri: std::sync::Arc<str>,
            message: rmcp::model::ClientJsonRpcMessage,
            session_id: Option<std::sync::Arc<str>>,
            auth_header: Option<String>,
            custom_headers: std::collections::HashMap<http::HeaderName, http::HeaderValue>,
        ) -> Result<
            rmcp::transport::streamable_http_client::StreamableHttpPostResponse,
            rmcp::transport::streamable_http_client::StreamableHttpError<$error>,
        > {
            self.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                rmcp::transport::streamable_http_client::StreamableHttpResponseLimits::default(),
            )
            .await
        }

        async fn post_message_with_max_sse_event_size(
            &self,
            uri: std::sync::Arc<str>,
            message: rmcp::model::ClientJsonRpcMessage,
            session_id: Option<std::sync::Arc<str>>,
            auth_header: Option<String>,
            custom_headers: std::collections::HashMap<http::HeaderName, http::HeaderValue>,
            max_sse_event_size: usize,
        ) -> Result<
            rmcp::transport::streamable_http_client::StreamableHttpPostResponse,
            rmcp::transport::streamable_http_client::StreamableHttpError<$error>,
        > {
            let mut limits =
                rmcp::transport::streamable_http_client::StreamableHttpResponseLimits::default();
            limits.max_sse_event_size = max_sse_event_size;
            self.post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
        }

        async fn get_stream(
            &self,
            uri: std::sync::Arc<str>,
            session_id: Option<std::sync::Arc<str>>,
            last_event_id: Option<String>,
            auth_header: Option<String>,
            custom_headers: std::collections::HashMap<http::HeaderName, http::HeaderValue>,
        ) -> Result<
            futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
            rmcp::transport::streamable_http_client::StreamableHttpError<$error>,
        > {
            self.get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                rmcp::transport::streamable_http_client::StreamableHttpResponseLimits::default()
                    .max_sse_event_size,
            )
            .await
        }
    };
}
