// Package process supervises the server processes of the local environment:
// it starts a binary with its output in a log file, reports when it exits,
// stops it with SIGTERM and then SIGKILL after a grace period, and waits for
// readiness while watching for an early exit.
//
//	p, err := process.Start(process.Config{Name: "etcd-0", Path: bin, Args: args, LogPath: logFile})
//	err = process.WaitReady(ctx, p, 30*time.Second, func(ctx context.Context) error { return probe(ctx) })
//	defer p.Stop()
//
// Errors from a process that failed carry the tail of its log, so a test
// failure says why the server did not come up.
//
// Every process is started in its own process group with the parent-death
// signal set to SIGKILL: a test binary that crashes takes its servers with
// it. Processes are only ever signalled through the handle that started them,
// never found by name.
package process
