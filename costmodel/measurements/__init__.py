"""Measured inputs and what is fitted from them: probe results (local prefill/decode), endpoint probe
results, calibrations (efficiencies) and their least-squares fit, and the validation against published
reference measurements."""
