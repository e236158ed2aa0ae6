// Package logscmd implements `weir logs`: the controllers' JSON log lines,
// filtered by level, kind, name and namespace and printed in the flux CLI's
// one-line form. Lines come from the pods of the Flux deployments
// (app.kubernetes.io/part-of=flux) in --flux-namespace, through the pod
// logs API, or from a file: --log-file, or the weir-controller.log that
// `weir dev` writes beside the kubeconfig in use.
//
// Differences from the flux CLI: --log-file and the `weir dev` log; a
// malformed line is skipped rather than ending the output; -f is bounded
// by Ctrl-C, not --timeout.
package logscmd
