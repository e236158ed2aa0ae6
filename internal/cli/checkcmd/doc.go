// Package checkcmd implements `weir check`: the Kubernetes version
// prerequisite (--pre), then the health of each controller Deployment, the
// installed version, and each CRD with its stored version, as `flux check`
// reports them.
package checkcmd
