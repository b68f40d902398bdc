"""What every runtime's package shares: the lowering protocol (:mod:`.lowering`), the single-env
port (:mod:`.port`) and the check-profile runner (:mod:`.profile`). Imports no framework."""
