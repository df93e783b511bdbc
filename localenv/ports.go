package localenv

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago (all held open until the last one is found, so none repeats).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portOrFree returns port if it is free (ErrPortInUse if it is not), or a
// free port when port is zero.
func portOrFree(host string, port int) (int, error) {
	if port == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return 0, fmt.Errorf("find free port on %s: %w", host, err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return 0, fmt.Errorf("%w: %s:%d", ErrPortInUse, host, port)
		}
		return 0, fmt.Errorf("check port %s:%d: %w", host, port, err)
	}
	l.Close()
	return port, nil
}
