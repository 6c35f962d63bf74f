"""Output stage: the state of OUT (manifest), names in the crate, and transactional writes."""
