"""Measured inputs and what is fitted from them: probe results (local prefill/decode), endpoint probe
results, calibrations (efficiencies) and their least-squares fit (the validation against published reference
measurements, which runs the serving simulator, is `costmodel.validation`)."""
