// Package completioncmd implements `weir completion bash|zsh|fish|powershell`:
// the shell completion scripts cobra generates for the whole command tree.
package completioncmd
