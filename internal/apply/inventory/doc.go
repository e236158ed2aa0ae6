// Package inventory owns the Kustomization inventory
// (status.inventory.entries): the record of what the last apply wrote,
// which the next reconcile compares with its build to find what to prune.
//
// # Ids
//
// An entry is {id, v}: id is "<namespace>_<name>_<group>_<kind>" and v the
// API version the object was applied with, for example
// {default_podinfo_apps_Deployment, v1}, {default_podinfo__Service, v1}
// (core group) and {_apps__Namespace, v1} (cluster-scoped). The format is
// Flux's (it comes from cli-utils' ObjMetadata), so an inventory written
// by Flux is read by weir and the other way round.
//
// Namespaces, groups and kinds never contain "_", but a few kinds accept
// names that do: the RBAC kinds (Role, ClusterRole, RoleBinding,
// ClusterRoleBinding) take any name without "/" or "%", such as
// "system:controller:job-controller" or "my_role". For them the id writes
// every ":" of the name as "__", and Parse reads "__" back as ":", as
// cli-utils does. cli-utils then refuses any name that still contains "_"
// ("too many fields"), so Flux fails to read the inventory of a
// Kustomization that applied a ClusterRole named "my_role". Parse accepts
// such names: the namespace ends at the first "_", the kind starts after
// the last and the group after the one before, so the rest is the name,
// whatever it contains. Only a name that has "_" right before or after a
// ":" (or "__" of its own) is ambiguous once written, and is read back as
// Flux would write it; the API server's names for its own roles never are.
// Other kinds' names are DNS subdomains and need no escaping.
//
// # Order
//
// New keeps the order of the change set Apply returned: stage by stage
// (definitions, classes, custom stage kinds, the rest) and, within a
// stage, Flux's kind order, then namespace and name. That is the order
// kustomize-controller records (it appends the entries of ApplyAllStaged's
// change set), so the same build gives the same inventory under both.
package inventory
