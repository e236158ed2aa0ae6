// Package uicmd is `weir ui`: the UI served on 127.0.0.1 with the user's
// own kubeconfig, so that every read and action runs with the user's
// credentials and the cluster's RBAC decides. It prints the URL with a
// one-time login token (the browser that opens it gets the session) and,
// with --open, hands it to the desktop's browser.
package uicmd
