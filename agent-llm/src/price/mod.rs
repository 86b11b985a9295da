//! What model calls cost: [`PriceTable`] prices a call's [`Usage`](crate::Usage) by provider
//! and model into a [`Cost`] (in [`Usd`], part by part); a model the table does not know is
//! *unpriced* ([`Cost::unpriced_calls`]), never $0.
//!
//! The built-in table ([`PriceTable::builtin`]) is the `prices/data_slim.json` of pydantic's
//! genai-prices (<https://github.com/pydantic/genai-prices>, MIT licence, commit `47df840a`
//! of 2026-08-21), kept unchanged in `agent-llm/prices/` with its licence. Prices change: give
//! a table of your own in the same shape ([`PriceTable::from_file`], [`PriceTable::before`]),
//! or single models ([`PriceTable::with_model`]).
//!
//! Prices follow genai-prices' rules: dollars per million tokens; a tiered price applies to
//! every token of a call whose input (cache reads and writes included) passes the tier's start;
//! of several dated prices, the last that applies. eugene's [`Usage::input_tokens`](
//! crate::Usage::input_tokens) are the tokens billed at the normal rate (cache reads and writes
//! apart), so each kind is priced once.

mod matcher;
mod model_price;
mod money;
mod table;

pub use model_price::{ModelPrice, Rate};
pub use money::{Cost, Usd};
pub use table::{PriceTable, PriceTableError};
