package app

import "context"

// controller is one reconciler group weir-controller can run.
type controller struct {
	name  string
	setup func(ctx context.Context, deps *Deps) error
}

// registry lists every controller weir-controller knows, in start order.
// Names follow Flux's components without the "-controller" suffix.
var registry = []controller{
	{name: "source", setup: setupSource},
	{name: "kustomize", setup: setupKustomize},
	{name: "helm", setup: setupHelm},
	{name: "notification", setup: setupNotification},
	{name: "image-reflector", setup: setupImageReflector},
	{name: "image-automation", setup: setupImageAutomation},
}

// AllControllers returns the names --controllers accepts.
func AllControllers() []string {
	names := make([]string, 0, len(registry))
	for _, c := range registry {
		names = append(names, c.name)
	}
	return names
}
