// Package suspendcmd implements `weir suspend`: set spec.suspend on one or
// more objects of a kind (or --all in the namespace), as `flux suspend` does.
package suspendcmd
