//! A remote tool that asks the client's model (`sampling/createMessage`).
