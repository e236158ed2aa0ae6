// Package dirlock lets one process at a time own a directory, through a
// lock file inside it. `weir dev` takes it before it empties its folder, so
// that a second weir dev on the same folder refuses at once instead of
// regenerating the certificates and kubeconfig under the first one's
// control plane.
//
// The lock is flock(2) held on an open file descriptor, not the presence of
// a file or the liveness of a PID: the kernel drops it when the holder's
// last descriptor closes, including when the holder is killed with
// SIGKILL, so a stale lock file needs no clean-up and PID reuse cannot keep
// a dead holder's lock alive. The holder's PID is written into the file
// only so that the refusal can name it. The descriptor is opened
// close-on-exec, so the child processes a holder starts do not inherit the
// lock and cannot keep it after the holder is gone.
//
//	l, err := dirlock.Acquire(filepath.Join(dir, "weir-dev.lock"))
//	var held *dirlock.HeldError
//	if errors.As(err, &held) { ... held.PID ... }
//	defer l.Release()
//
// flock locks belong to the open file description, so two Acquire calls in
// one process exclude each other as two processes do (fcntl locks would
// not), which is what lets weir dev's tests run instances side by side.
package dirlock
