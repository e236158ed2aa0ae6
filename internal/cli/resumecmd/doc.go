// Package resumecmd implements `weir resume`: clear spec.suspend on one or
// more objects of a kind (or --all), then wait for them to be reconciled, as
// `flux resume` does.
package resumecmd
