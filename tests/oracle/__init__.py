"""Test oracles: deliberately naive, independent re-implementations the engine is checked
against (host only)."""
