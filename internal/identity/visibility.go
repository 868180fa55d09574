package identity

// CheckVisibility says what keeps the daemon, as it runs now, from seeing
// its callers' processes, one sentence per problem; nil when nothing does.
// A policy whose rules name pods, containers or groups never matches a
// caller the daemon cannot see, so the daemon warns at start (and readiness
// reports it) instead of refusing every call of a legitimate driver
// without a word. See checkVisibility in the per-OS files for what is
// checked.
func CheckVisibility(o Options) []string { return checkVisibility(o) }
