// Package ssa owns how weir writes a build to a cluster: server-side apply
// in stages, drift detection by dry-run, the per-object annotations of
// Flux's Kustomization API, pruning, and waiting for objects to become
// healthy. The kustomize controller and `weir diff`/`weir build` share it,
// so the CLI shows what the controller does.
//
// # Client
//
// A Manager works through a controller-runtime client.Client rather than
// client-go's dynamic client and a RESTMapper of its own: the controllers
// already hold one (or build one that impersonates a service account or
// talks to a remote cluster), it reads and writes unstructured objects of
// any kind, and its default RESTMapper discovers kinds that appear while it
// runs, which Apply needs to write a custom resource right after its CRD.
// The client must not serve unstructured reads from a cache. A Manager has
// no other state and may be used from several goroutines.
//
// # Apply
//
// Apply writes in four stages, the same as Flux's ApplyAllStaged:
//
//  1. CustomResourceDefinitions, Namespaces and ClusterRoles (not
//     ClusterRoleBindings), then waits for them: CRDs Established,
//     Namespaces Active, by kstatus;
//  2. kinds whose name ends in "Class" (StorageClass, IngressClass,
//     GatewayClass, ...), then waits for them too;
//  3. ApplyOptions.CustomStageKinds (--custom-apply-stage-kinds);
//  4. everything else.
//
// Within a stage objects go in Flux's kind order (CRD, Namespace, the
// Class kinds, ResourceQuota, ServiceAccount, Role, ClusterRole,
// RoleBinding, ClusterRoleBinding, ConfigMap, Secret, Service,
// LimitRange, Deployment, StatefulSet, CronJob, PodDisruptionBudget, then
// every other kind by group and kind, then the webhook configurations),
// then by namespace and name. That is also the order of the ChangeSet and
// so of the inventory.
//
// For each object of a stage Apply reads the object in the cluster and
// dry-run applies the manifest (server-side, field manager
// "kustomize-controller", force), as Flux does. The dry-run result is
// compared with the object read, ignoring resourceVersion and
// managedFields: equal means "unchanged" and nothing is written, so a
// reconcile of an unchanged build makes no write at all; different means
// "configured", absent means "created". Only when every object of the
// stage passed its dry-run are the changed ones applied for real, in
// order; objects of one kind are written concurrently. Just before, Apply
// hands them to ApplyOptions.BeforeWrite, where the Kustomization
// controller records them in its inventory; ApplyOptions.IntendWrites
// hears of every object of the stage as its validation starts, so that
// such a record runs alongside the dry-runs instead of between them and
// the writes. When a controller
// updated the object between the read and the dry-run (the dry-run answers
// with the resourceVersion it was computed on), the object is read and
// dry-run again, so a Deployment rolling out is not reported configured.
// When ApplyOptions.Owner is set, objects already labelled with it are read
// with one list request per kind and namespace instead of one read each,
// and when two or more of a kind are not among them, one more list of the
// kind's metadata tells which are absent, so that a first apply reads
// nothing before its dry-runs. An object that neither a list nor the Memo
// answers for (the one object of its kind in a Kustomization, as in a
// fan-out) is dry-run first and read only when the dry-run shows it
// exists: the server answers the dry-run of an absent object with an
// object it never stored, without a resourceVersion, which is "created"
// already. With ApplyOptions.KeepWritten the ChangeSet keeps the server's
// answer to each write (ChangeSet.Written), which the Kustomization
// controller's health check reads instead of the object.
//
// EarlyPlans reads and dry-runs objects before Apply is called, while the
// rest of their build is still rendered; it writes nothing. Apply
// (ApplyOptions.Early) takes the plans that succeeded for objects it is
// given unchanged, until a stage writes, and plans everything else itself,
// so a stage is still validated whole before any of it is written and a
// failure reads as it would have.
//
// With ApplyOptions.Memo, an object whose manifest is the one Apply last
// found in place (or wrote), and which is still at the resourceVersion
// Apply saw then, is unchanged without a dry-run: no one has written it
// since. A reconcile of a build that nothing touched is then one list
// request per kind and namespace.
//
// The apply uses force: the manifest wins every conflict over a field it
// sets. Before applying an object already in the cluster, Apply takes over
// the fields that kubectl (managers whose name starts with "kubectl", in
// Apply and Update operations), "before-first-apply", the controller's own
// pre-SSA updates and ApplyOptions.OverrideManagers (--override-manager)
// own, by moving them into the field manager's apply entry with a JSON
// patch of metadata.managedFields; the apply then removes those of them the
// manifest no longer has. The same patch drops kubectl's
// kubectl.kubernetes.io/last-applied-configuration annotation and Flux
// v1's checksum annotations and garbage-collection label. The patch tests
// the resourceVersion it was computed from, so it never overwrites
// managedFields that changed meanwhile. flux-client-side-apply, the manager
// Flux documents for hand edits, is never taken over.
//
// # Drift
//
// Every reconcile applies the whole build again, so drift is corrected on
// the next interval: a field another tool changed is part of the manifest,
// the dry-run shows it would change back, the object is "configured", and
// the forced apply sets the manifest's value again and takes the field's
// ownership back. A Memo never hides drift: any write, by anyone, gives the
// object a new resourceVersion, and the object is dry-run again. Fields the manifest does not set are not drift: another
// manager may own them (an HPA's replicas, a webhook's injected sidecar).
//
// # Diff
//
// Manager.Diff answers, for one object and without writing, what Apply's
// dry-run sees: created (absent, or its kind or namespace not there yet),
// unchanged, or changed, with a unified diff of the object's YAML (cluster
// first; status and server-set metadata left out; Secret data and
// stringData values masked, showing only which keys changed) and the JSON
// patch from the cluster's object to the dry-run result. Ignore paths,
// JSON pointers (RFC 6901), are removed from both sides before they are
// compared. `weir diff` and the helm controller's drift detection share
// it; IgnorePaths and Selects pick the rules of spec.driftDetection.ignore
// that target an object.
//
// # Per-object annotations
//
// Values are compared without regard to case, in annotations or labels,
// as Flux does.
//
//   - kustomize.toolkit.fluxcd.io/ssa: Override (default) applies as above.
//   - ssa: Merge skips the takeover: fields that kubectl or the override
//     managers set and the manifest does not stay.
//   - ssa: IfNotPresent creates the object when it is missing and never
//     touches it again ("skipped").
//   - ssa: Ignore, in the manifest or on the object in the cluster, leaves
//     the object out ("skipped").
//   - kustomize.toolkit.fluxcd.io/reconcile: disabled, in the manifest or in
//     the cluster, leaves the object out of applies and prunes.
//   - kustomize.toolkit.fluxcd.io/force: Enabled recreates this object on an
//     immutable-field change, as ApplyOptions.Force (spec.force) does for
//     all.
//
// # Immutable fields
//
// When the dry-run fails because a field cannot change (a Job's template,
// a Service's clusterIP, a StatefulSet's volumeClaimTemplates, a CEL
// "self == oldSelf" rule), Apply returns an *ImmutableFieldError naming the
// object and the fields, or with force deletes the object, waits until it
// is gone and creates it ("created"). Flux counts every Invalid or
// Conflict answer as immutable, so with force a merely invalid object is
// deleted and then fails to be created again; weir recreates only when the
// server's message says a field is immutable.
//
// # Prune and Wait
//
// Prune deletes objects in the reverse apply order and never deletes one
// annotated prune: Disabled or reconcile: disabled, nor one whose owner
// labels do not name the pruning Kustomization. Wait polls objects until
// kstatus says Current and otherwise names each one still not ready with
// its status and kstatus's reason.
//
// # Input
//
// Apply works on copies of its input and never changes it. It drops
// metadata.resourceVersion, metadata.uid and metadata.managedFields from
// the copies: a manifest that carries them (an object exported with
// kubectl get -o yaml) would otherwise turn every apply into a conflict.
package ssa
