package ssa

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Action is what Apply or Prune did to one object. The values are Flux's:
// they appear in events and in `flux diff`-style output.
type Action string

const (
	// Created means the object did not exist and was created (or was deleted
	// and created again because of an immutable field).
	Created Action = "created"
	// Configured means the object existed and the apply changed it.
	Configured Action = "configured"
	// Unchanged means the server-side dry-run showed the apply would change
	// nothing, so nothing was written.
	Unchanged Action = "unchanged"
	// Deleted means Prune deleted the object, or found it already gone.
	Deleted Action = "deleted"
	// Skipped means an annotation or label excluded the object (ssa: Ignore,
	// ssa: IfNotPresent on an existing object, reconcile: disabled, prune:
	// Disabled, or owner labels naming another Kustomization).
	Skipped Action = "skipped"
)

// ChangeSetEntry is the outcome for one object.
type ChangeSetEntry struct {
	ObjMetadata ObjMetadata
	// Version is the API version the object was applied with ("v1",
	// "v1beta2"), which the inventory records beside the object's id.
	Version string
	Action  Action
}

// String returns Flux's event line, "Deployment/default/podinfo created".
func (e ChangeSetEntry) String() string {
	return e.ObjMetadata.String() + " " + string(e.Action)
}

// ChangeSet lists outcomes in the order the objects were handled: for
// Apply the apply order (stage by stage, then kind, namespace and name),
// which is also the order of the inventory Flux records.
type ChangeSet struct {
	Entries []ChangeSetEntry

	// written are the API server's answers to the applies Apply made, by
	// object, when ApplyOptions.KeepWritten asked for them.
	written map[ObjMetadata]*unstructured.Unstructured
}

// Written returns the object id as the API server answered the apply that
// created or changed it, when ApplyOptions.KeepWritten asked Apply to keep
// it; nil otherwise (not written, or not kept). The object is shared:
// callers copy it before they change it.
func (c *ChangeSet) Written(id ObjMetadata) *unstructured.Unstructured {
	if c == nil {
		return nil
	}
	return c.written[id]
}

func (c *ChangeSet) keepWritten(id ObjMetadata, obj *unstructured.Unstructured) {
	if c.written == nil {
		c.written = map[ObjMetadata]*unstructured.Unstructured{}
	}
	c.written[id] = obj
}

// String returns one line per entry.
func (c *ChangeSet) String() string {
	if c == nil {
		return ""
	}
	lines := make([]string, len(c.Entries))
	for i, e := range c.Entries {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

// Changes returns the lines of the entries that changed the cluster
// (created, configured, deleted): the message of Flux's Progressing event,
// empty when a reconcile changed nothing.
func (c *ChangeSet) Changes() string {
	if c == nil {
		return ""
	}
	var lines []string
	for _, e := range c.Entries {
		switch e.Action {
		case Created, Configured, Deleted:
			lines = append(lines, e.String())
		}
	}
	return strings.Join(lines, "\n")
}

// Objects returns the identities of the entries that were not skipped, for
// a health check of everything applied.
func (c *ChangeSet) Objects() []ObjMetadata {
	if c == nil {
		return nil
	}
	var out []ObjMetadata
	for _, e := range c.Entries {
		if e.Action != Skipped {
			out = append(out, e.ObjMetadata)
		}
	}
	return out
}

// Skipped returns the identities of the skipped entries. An object Apply
// skipped stays out of the new inventory, as in Flux, and must also stay
// out of the prune: see inventory.Diff.
func (c *ChangeSet) Skipped() []ObjMetadata {
	if c == nil {
		return nil
	}
	var out []ObjMetadata
	for _, e := range c.Entries {
		if e.Action == Skipped {
			out = append(out, e.ObjMetadata)
		}
	}
	return out
}
