package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultStopGrace is how long Stop waits after SIGTERM before it sends
// SIGKILL, when Config.StopGrace is zero.
const DefaultStopGrace = 5 * time.Second

// ErrExited is returned by WaitReady when the process exits before it is
// ready. The error also carries the exit status and the tail of the log.
var ErrExited = errors.New("process exited")

// Config describes a process to start.
type Config struct {
	// Name identifies the process in errors, for example "etcd-0".
	Name string
	// Path is the binary to run.
	Path string
	// Args are the arguments, without the program name.
	Args []string
	// Env is added to the parent's environment; later entries win.
	Env []string
	// Dir is the working directory; empty means the parent's.
	Dir string
	// LogPath receives stdout and stderr, appended to; its directory is
	// created. Required.
	LogPath string
	// StopGrace is how long Stop waits between SIGTERM and SIGKILL;
	// zero means DefaultStopGrace.
	StopGrace time.Duration
}

// Process is a running (or exited) child process.
type Process struct {
	cfg  Config
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}

	mu      sync.Mutex
	waitErr error
}

// Start runs the binary described by cfg. It returns once the process has
// been created; use WaitReady to wait until it serves.
func Start(cfg Config) (*Process, error) {
	if cfg.Path == "" || cfg.LogPath == "" {
		return nil, fmt.Errorf("start %s: Path and LogPath are required", cfg.Name)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.LogPath), 0o755); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	logFile, err := os.OpenFile(cfg.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Dir = cfg.Dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	p := &Process{cfg: cfg, cmd: cmd, log: logFile, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

func (p *Process) wait() {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.waitErr = err
	p.mu.Unlock()
	p.log.Close()
	close(p.done)
}

// Name returns the name given in Config.
func (p *Process) Name() string { return p.cfg.Name }

// PID returns the process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// LogPath returns the file that receives the process output.
func (p *Process) LogPath() string { return p.cfg.LogPath }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// ExitErr returns the result of waiting for the process: nil while it runs
// or after a clean exit, an *exec.ExitError otherwise.
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// ExitCode returns the exit code, -1 while running or when killed by a signal.
func (p *Process) ExitCode() int {
	if p.Running() {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Stop sends SIGTERM to the process group, waits up to the grace period and
// then sends SIGKILL. It returns once the process has exited. Stopping an
// exited process is a no-op.
func (p *Process) Stop() error {
	grace := p.cfg.StopGrace
	if grace == 0 {
		grace = DefaultStopGrace
	}
	return p.stop(syscall.SIGTERM, grace)
}

// Kill sends SIGKILL to the process group and waits until it has exited.
func (p *Process) Kill() error {
	return p.stop(syscall.SIGKILL, 0)
}

func (p *Process) stop(sig syscall.Signal, grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	p.signal(sig)
	if sig != syscall.SIGKILL {
		select {
		case <-p.done:
			return nil
		case <-time.After(grace):
			p.signal(syscall.SIGKILL)
		}
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("stop %s (pid %d): still running 30s after SIGKILL", p.cfg.Name, p.PID())
	}
}

// signal signals the whole process group, so helpers the server forked die
// with it. Errors mean the group is already gone.
func (p *Process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.PID(), sig)
}

// LogTail returns the last n lines of the process log.
func (p *Process) LogTail(n int) string {
	return Tail(p.cfg.LogPath, n)
}

// Tail returns the last n lines of the file at path, or a note saying why it
// could not be read.
func Tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const window = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		_, _ = f.Seek(-window, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ExitError is returned when a process exits before it becomes ready.
type ExitError struct {
	// Name is the process name.
	Name string
	// Err is the result of waiting for it (exit status or signal).
	Err error
	// LogTail is the end of its log.
	LogTail string
}

func (e *ExitError) Error() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s exited before it was ready", e.Name)
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	fmt.Fprintf(&b, "; log tail:\n%s", e.LogTail)
	return b.String()
}

// Is makes errors.Is(err, ErrExited) true.
func (e *ExitError) Is(target error) bool { return target == ErrExited }

// Unwrap returns the wait error.
func (e *ExitError) Unwrap() error { return e.Err }

// NotReadyError is returned when a process is still running but did not pass
// its readiness check within the timeout.
type NotReadyError struct {
	Name    string
	Timeout time.Duration
	// Last is the last readiness check error.
	Last    error
	LogTail string
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("%s not ready after %s: %v; log tail:\n%s", e.Name, e.Timeout, e.Last, e.LogTail)
}

// Unwrap returns the last readiness check error.
func (e *NotReadyError) Unwrap() error { return e.Last }

// WaitReady calls check every 100ms until it returns nil, the process exits
// (an *ExitError), the timeout passes (a *NotReadyError) or ctx is done.
func WaitReady(ctx context.Context, p *Process, timeout time.Duration, check func(context.Context) error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return &ExitError{Name: p.cfg.Name, Err: p.ExitErr(), LogTail: p.LogTail(30)}
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", p.cfg.Name, ctx.Err())
		case <-deadline.C:
			return &NotReadyError{Name: p.cfg.Name, Timeout: timeout, Last: last, LogTail: p.LogTail(30)}
		case <-tick.C:
		}
	}
}
