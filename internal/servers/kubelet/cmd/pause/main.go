// Command pause is the pod sandbox's process for tenantkit's local
// environment, the Go equivalent of Kubernetes' pause.c: it sleeps until
// SIGTERM or SIGINT (then exits 0) and reaps the zombies that, as a pod's
// PID 1, it inherits. It is built static, to run alone in an empty image.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is printed by -v, as pause.c does.
const version = "tenantkit"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-v" {
		fmt.Println("pause.go", version)
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", sig)
			os.Exit(0)
		}
		reap()
	}
}

// reap waits for every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
