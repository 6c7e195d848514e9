//! Token counting of rendered tools arrays, per dialect (exact for OpenAI via tiktoken, estimated elsewhere).
