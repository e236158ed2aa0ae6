// Package deletecmd implements `weir delete`: delete one object, after
// asking (unless -s/--silent), as `flux delete` does.
package deletecmd
