"""What every runtime's package shares: the lowering protocol (:mod:`.lowering`), the export bases
(:mod:`.export`, :mod:`.batch`) and the check-profile runner (:mod:`.profile`). Imports no framework."""
