"""Reading the audit trail (a space's, one's own, the operators' whole one) and recording
what was refused (failed logins, refused writes) without letting a flood fill it."""
