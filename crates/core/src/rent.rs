//! Rent arithmetic: what a tools array costs per request, per session and per month, exact until display.
