package etcdrelocate

// MarkHolderGone marks l's holder as a process of this machine that has
// exited, as observing the Lease finds it (holderGone), for the external
// tests of Preflight, which does no I/O.
func MarkHolderGone(l *LeaseInfo) { l.gone = true }
