package runner

import (
	"errors"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// exitWatch notes when a process that is not gcjitter's child ended: a
// rank a launcher started, known by the pid in its meta record. Its pidfd
// (Linux 5.3+) turns readable at the exit, so the ranks' exits are ordered
// as they happened, to within the host's scheduling delay (each exit is
// timed when its watcher wakes: a few ms, more on a loaded host). Their
// streams' last writes are not: ranks in one
// collective write the same step's record within a tick of the file clock,
// in either order, whichever of them then died.
type exitWatch struct {
	done  chan struct{}
	at    time.Time // written before done closes
	bound bool      // at is when it was found ended, not when it ended
}

// exitPoll is how often a watcher looks whether the group is over.
const exitPoll = 50 * time.Millisecond

// exitLinger bounds the wait for a rank that outlives its launcher's
// process group: its exit time stays unknown.
const exitLinger = time.Second

// watchExit watches pid, a descendant of launcher, until it exits or,
// after over closes, for exitLinger more, then kills it. Without a pidfd
// (gone already, an old kernel), or for a pid that is not the launcher's
// descendant here (a rank in another pid namespace names a number that is
// someone else's), the exit time stays zero; for a process that has
// exited already it is a bound, the time of the look.
func watchExit(pid, launcher int, over <-chan struct{}) *exitWatch {
	w := &exitWatch{done: make(chan struct{})}
	fd, err := unix.PidfdOpen(pid, 0)
	if err == nil && !descendsFrom(pid, launcher) {
		unix.Close(fd)
		err = unix.ESRCH
	}
	if err == nil && exitedAlready(fd) {
		// It ended before its meta record was read: this look bounds when.
		unix.Close(fd)
		w.at, w.bound = time.Now(), true
		close(w.done)
		return w
	}
	if err != nil {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		var deadline time.Time
		for {
			n, err := unix.Poll(fds, int(exitPoll/time.Millisecond))
			if n > 0 {
				w.at = time.Now()
				return
			}
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			select {
			case <-over:
				if deadline.IsZero() {
					deadline = time.Now().Add(exitLinger)
				} else if time.Now().After(deadline) {
					// It outlived its launcher: torchrun starts each rank in
					// a session of its own, which the launcher's group kill
					// does not reach. The pidfd still holds the pid, so it
					// is the rank's: kill it, and its group where it leads
					// one. Its exit time stays unknown.
					if pgid, err := unix.Getpgid(pid); err == nil && pgid == pid {
						unix.Kill(-pid, unix.SIGKILL)
					}
					unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
					return
				}
			default:
			}
		}
	}()
	return w
}

// exitedAlready reports whether the process behind pidfd fd has exited
// (a zombie not yet reaped).
func exitedAlready(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if !errors.Is(err, unix.EINTR) {
			return n > 0
		}
	}
}

// exitedAt is when the process exited, zero when unknown, and whether
// that is only a bound (it had exited when watched); it waits for the
// watch to end.
func (w *exitWatch) exitedAt() (at time.Time, bound bool) {
	if w == nil {
		return time.Time{}, false
	}
	<-w.done
	return w.at, w.bound
}

// descendsFrom reports whether ancestor is pid's parent, or its parent's,
// and so on: torchrun starts each rank in a session of its own, so the
// process group does not tell.
func descendsFrom(pid, ancestor int) bool {
	for range 16 {
		f := procStat(pid) // state ppid ...
		if len(f) < 2 {
			return false
		}
		var err error
		if pid, err = strconv.Atoi(f[1]); err != nil || pid <= 1 {
			return false
		}
		if pid == ancestor {
			return true
		}
	}
	return false
}
