// Package backup backs Cozystack tenant clusters up with Velero to an S3
// Bucket, and reads and verifies those backups straight from the bucket.
//
// The flow follows Cozystack's "Backups with the Velero addon" guide, with
// each step a typed, waitable call:
//
//	// 1. The Bucket's credentials, from its Secret in the tenant namespace.
//	creds, err := backup.LoadCredentials(ctx, kube,
//		backup.BucketRef{Namespace: "tenant-demo", Bucket: "velero-backups", User: "velero"})
//
//	// 2. The Velero addon values for the tenant's Kubernetes resource
//	//    (spec.addons.velero.valuesOverride, everything under "velero:").
//	values, err := backup.AddonValues(creds, backup.ValuesOptions{})
//	yaml, err := values.YAML()
//
//	// 3. In the tenant cluster: the location, a backup, a restore.
//	c, err := backup.NewForConfig(tenantRESTConfig, backup.Config{}) // namespace cozy-velero
//	_, err = c.WaitLocationAvailable(ctx, "default")
//	_, err = c.CreateBackup(ctx, backup.BackupOptions{Name: "demo-1", IncludedNamespaces: []string{"demo"}})
//	b, err := c.WaitBackup(ctx, "demo-1", backup.WaitOptions{Progress: show})
//	_, err = c.CreateRestore(ctx, backup.RestoreOptions{Name: "demo-1-restore", BackupName: "demo-1"})
//	_, err = c.WaitRestore(ctx, "demo-1-restore", backup.WaitOptions{})
//
//	// Schedules: Velero makes the backups (<name>-<timestamp>); list them
//	// newest first, pause and unpause.
//	_, err = c.CreateSchedule(ctx, backup.ScheduleOptions{Name: "nightly", Cron: "0 2 * * *",
//		Template: backup.BackupOptions{IncludedNamespaces: []string{"demo"}, TTL: 7 * 24 * time.Hour}})
//	made, err := c.ScheduleBackups(ctx, "nightly")
//	_, err = c.PauseSchedule(ctx, "nightly")
//	_, err = c.UnpauseSchedule(ctx, "nightly", backup.UnpauseOptions{})
//
//	// 4. Straight from S3 (or a copy of the bucket on disk:
//	//    NewDirObjects), with no Velero server: list, read, verify.
//	objects, err := backup.NewS3Objects(backup.S3Config{Credentials: creds})
//	store, err := backup.NewStore(backup.StoreConfig{Objects: objects})
//	names, err := store.ListBackups(ctx)
//	report, err := store.Verify(ctx, "demo-1", backup.VerifyOptions{})
//
//	// 5. Before a restore, what it will do to the cluster; after it,
//	//    whether it did it.
//	target, err := backup.NewRestoreTarget(tenantRESTConfig)
//	plan, err := store.PlanRestore(ctx, "demo-1", target, backup.PlanOptions{
//		Spec: velerov1.RestoreSpec{ExistingResourcePolicy: velerov1.PolicyTypeUpdate}})
//	fmt.Print(plan) // or encoding/json
//	check, err := store.CheckRestore(ctx, "demo-1-restore", target,
//		backup.CheckOptions{Backup: "demo-1", Spec: restore.Spec, Plan: plan})
//
//	// 6. Retention: a plan you can print, then an executor.
//	plan, err := backup.PlanRetention(backups, backup.Policy{KeepDaily: 7, KeepWeekly: 4})
//	fmt.Print(plan)
//	deleted, err := c.ExecuteRetention(ctx, plan)
//
// Client works on velero.io/v1 objects with Velero's own API types
// (github.com/vmware-tanzu/velero/pkg/apis/velero/v1). It deletes backups
// only through DeleteBackupRequests, which Velero's server processes:
// deleting a Backup object alone leaves its data in the bucket, and the
// next bucket sync brings it back. ApplyLocation creates a location the way
// the addon chart does from the values (useful where no chart runs, as in
// the local environment); it refuses a prefix whose top level holds
// folders that are not Velero's, because Velero would mark such a location
// Unavailable.
//
// LoadCredentials is the one way to a Bucket's Credentials in Cozystack;
// for another S3 store, fill Credentials in.
//
// A Store reads a backup storage location from an ObjectStore: S3Objects
// (the bucket, over S3), DirObjects (a copy of the bucket on disk, as
// `aws s3 sync` or `rclone sync` leave it; no key leaves its directory) or
// backuptest.MemObjects (memory, for tests). It never writes or deletes.
// S3Objects retries 5xx answers, throttling and connection errors with
// backoff, and resumes an interrupted download with a Range request pinned
// to the object's ETag, so it never mixes two versions of an object.
//
// # What Verify proves
//
// Store.Verify never reports OK on a broken backup, from any ObjectStore:
// it reports OK only when all of this holds:
//
//   - velero-backup.json, <name>.tar.gz and <name>-resource-list.json.gz
//     are present; velero-backup.json decodes, names this backup, and its
//     phase is Completed or PartiallyFailed.
//   - Every gzip file (archive, resource list, logs, results) is one intact
//     gzip member: CRC and length checked, nothing after it.
//   - The tarball is read to its end-of-archive blocks (a tar cut at an
//     entry boundary is truncated), with nothing but zeros after them, and
//     holds metadata/version.
//   - Every entry is a regular file with a plain relative path: no
//     symlink, hard link, device or directory, no absolute path and no
//     "..", "." or empty element.
//   - Every item entry (resources/<resource>[.<group>]/[<version>[-preferredversion]/]
//     {namespaces/<ns>|cluster}/<name>.json) is exactly one JSON object,
//     parsed in full (the same inputs encoding/json accepts, checked
//     without reflection), whose apiVersion is in its folder's group (and
//     version), whose metadata.name and metadata.namespace are its path's,
//     and each resource folder holds one kind, each kind one folder.
//   - The resource list and the archive agree item by item, by
//     "<group>/<version>/<Kind> [<namespace>/]<name>": every listed item is
//     in the archive, every archived item is listed, and neither holds an
//     item twice. When the archive has preferred-version copies, every item
//     has exactly one, and no copy is without its item.
//   - status.progress in velero-backup.json reports as many items backed up
//     as the archive holds (for PartiallyFailed: as the resource list
//     holds; Velero keeps the items that failed counted and listed, with no
//     file, so for PartiallyFailed such items are notes, not problems).
//
// Each problem is a Problem with a ProblemKind and, where one item is at
// fault, its name (or its archive path when the item cannot be
// identified); the report lists up to 100 and counts the rest. Items are
// compared through 64-bit hashes keyed with a random seed per run, so
// memory stays flat (8 bytes and a few bits per item); two distinct items
// collide with probability below n²/2⁶⁵. Items over 32 MiB are problems.
// A failure to read the store (a connection lost for good, an unreadable
// file) is returned as an error, never reported as OK nor as corruption.
// Verify does not check that items would restore (admission, schemas), nor
// the file-system backups (kopia) or volume snapshots a backup refers to.
//
// # What a restore preview guarantees
//
// Store.PlanRestore decides item by item as Velero v1.18.3's restore
// does (pkg/restore/restore.go, cited line by line in the source), and
// the package's tests hold it to the real Velero server: Velero's
// restored-resource list must equal the plan's VeleroResult for every
// item, and its restore log must restore the resources in the plan's
// order, under existingResourcePolicy none and update, label and OR
// selectors, namespace mapping, excluded resources and namespaces,
// restoreStatus and includeClusterResources.
//
//   - The backup is verified in the same read (everything Verify proves);
//     a backup that does not verify gets no plan, only Verify's
//     *VerifyError, and the cluster is not read.
//   - The archive is read once, streaming; the cluster is only read:
//     discovery, one list per resource and target namespace the backup
//     could collide with, and, past the first 2,000 listed objects
//     (kept whole), a get for each differing item whose fields the plan
//     names (at most 100). Memory grows with the plan's items and the
//     hashes of the listed objects, not with the archive.
//   - Each item gets one action: create; exists-identical (equal once
//     Velero's own normalization is applied: metadata it strips, status,
//     its restore labels, its built-in restore item actions for
//     services, service accounts, secrets, CRDs and role bindings);
//     exists-different (skipped with a warning under none) or update;
//     exists-kept (a namespace already there, or a service account
//     Velero's merge adds nothing to); excluded by the spec; or
//     never-restored (nodes, events, Velero's own objects, completed
//     pods and jobs, mirror pods, a service account's token secret while
//     the account exists); or fail (a mapping onto an invalid namespace
//     name, a label selector Velero cannot convert, a kept node port
//     another Service holds, a patch under update the apiserver refuses).
//     Where two backed-up items restore onto one target, Velero's order
//     decides and the plan says "one of: …". Items are in Velero's order: its
//     resource priorities, then the backup's other resources
//     alphabetically. Velero walks a resource's namespaces in a Go map's
//     order; the plan sorts them.
//   - A missing target namespace is planned as created, as Velero
//     creates it before the first item it restores into it.
//
// What a preview cannot know:
//
//   - Admission: webhooks, validating admission policies, quotas and
//     limit ranges may refuse or mutate what Velero creates or patches;
//     a patch under update can fail (an immutable field), which Velero
//     reports as failed.
//   - Plugins: restore item actions of installed plugins (and resource
//     modifiers, resource policies, the change-image-name and
//     change-storage-class ConfigMaps) change items the plan does not
//     see. Velero's own actions for PVCs and PVs depend on other objects,
//     volume snapshots and the node agent: such items are marked
//     Approximate. docs/backup.md lists what else is approximate.
//   - Time: the cluster can change between the preview and the restore.
//     Velero's EnableAPIGroupVersions feature (restoring a non-preferred
//     version) is not modelled; the plan uses the item as backed up.
//
// Store.CheckRestore, after a restore, plans again and reports each
// selected item missing from the cluster (apart from those Velero skipped
// or failed on as planned: RestoreCheck.Skipped) and each item Velero created or
// updated that no longer holds its backed-up fields (fields the cluster
// adds are not differences), beside Velero's own results and
// restored-resource list from the bucket; given the plan made before, it
// also lists where Velero did something else.
//
// # Phases
//
// Completed, PartiallyFailed, Failed and FailedValidation are final (a
// backup's, BackupTerminal, and a restore's alike); New (or empty), Queued,
// ReadyToStart, InProgress, WaitingForPluginOperations…, Finalizing… and
// Deleting are in flight. WaitBackup and WaitRestore return nil only for
// Completed.
//
// # Errors
//
// Branch on the sentinels with errors.Is; the typed errors carry details:
//
//   - ErrSecretNotFound; ErrInvalidSecret with *SecretError (which Secret
//     and key, never the value).
//   - ErrInvalidPrefix with *PrefixError (the foreign folders).
//   - ErrFailedValidation, ErrFailed, ErrPartiallyFailed with *PhaseError
//     (Velero's validation errors, failure reason, counts).
//   - ErrLocationUnavailable with *LocationError (Velero's message).
//   - ErrDeleteFailed with *DeleteError.
//   - ErrNotFound for missing backups and files (*ObjectNotFoundError for
//     a missing object); ErrInvalidKey with *KeyError for a key a
//     DirObjects refuses; ErrMalformed with
//     *DecodeError for Velero files that do not decode; ErrCorrupt with
//     *VerifyError (the whole report) from Verify, which also unwraps to
//     each Problem (errors.As finds the first).
//   - ErrInvalidPolicy from PlanRetention; ErrInvalidConfig for bad
//     configurations.
//   - ErrClusterUnreadable with *ClusterError (what was being read) and
//     ErrInvalidRestoreSpec with *RestoreSpecError (the field) from
//     PlanRestore and CheckRestore.
//
// Failures to reach the bucket or the apiserver are returned wrapped, as
// they are; Verify reports them as errors, not as corruption.
//
// # Testing
//
// Package backuptest holds a Store's objects in memory (MemObjects),
// writes synthetic backups in Velero's exact bucket layout, and puts a
// fault-injecting proxy (5xx, resets, truncated bodies, slow answers) in
// front of an S3 server. docs/backup.md tells which servers the package's
// own tests run against, and the measurements.
package backup
