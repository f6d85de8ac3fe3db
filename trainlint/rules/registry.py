"""The rules of this package, listed, so that a run imports only the modules of the rules
it runs (`trainlint.rule.listed_rules`): those of the kinds of the objects it checks.

`python -m trainlint.rules.registry [PATH]` writes `RULES` again from the rules' own
decorators (after adding a rule, or changing what its decorator says), into this module
or PATH; a test fails while this module is out of date. A rule module it does not list
is still found, and imported on every run.
"""

from __future__ import annotations

from typing import Any

# Written by `python -m trainlint.rules.registry`: code, name, kinds, since, until,
# preview, module, remediation.
RULES: tuple[tuple[Any, ...], ...] = (
    ('TL001', 'invalid-yaml', (), (2, 0), None, False, 'tl001_invalid_yaml', 'Fix the syntax at the position shown; the rest of the file is checked up to it.'),
    ('TL002', 'duplicate-key', (), (2, 0), None, False, 'tl002_duplicate_key', 'Keep one of the keys.'),
    ('TL003', 'document-too-complex', (), (2, 0), None, False, 'tl003_document_too_complex', 'Write the object out plainly: no alias chains, no deep nesting.'),
    ('TL004', 'not-a-kubernetes-object', (), (2, 0), None, False, 'tl004_not_an_object', 'Make each document one object with `apiVersion` and `kind`, or exclude the file.'),
    ('TL005', 'wrong-type', ('ClusterTrainingRuntime', 'PersistentVolumeClaim', 'StorageClass', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl005_wrong_type', 'Write the field with the type the API expects, or remove a null field.'),
    ('TL006', 'unknown-field', ('ClusterTrainingRuntime', 'PersistentVolumeClaim', 'StorageClass', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl006_unknown_field', "Fix the field's name (see the suggestion) or remove it."),
    ('TL007', 'field-from-other-release', ('ClusterTrainingRuntime', 'PersistentVolumeClaim', 'StorageClass', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl007_field_from_other_release', 'Use the field of the release the cluster runs, or set `trainer-version` to it.'),
    ('TL008', 'invalid-field-value', ('ClusterTrainingRuntime', 'PersistentVolumeClaim', 'StorageClass', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl008_invalid_field_value', 'Use a value the schema allows (see the message for the bound or the values); write quantities as Kubernetes spells them (`64Gi`, `500m`).'),
    ('TL009', 'missing-required-field', ('ClusterTrainingRuntime', 'PersistentVolumeClaim', 'StorageClass', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl009_missing_required_field', 'Add the field the schema requires.'),
    ('TL010', 'crd-validation-rule', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl010_crd_validation_rule', "Change the object so that the CRD's validation rule holds (see the message)."),
    ('TL011', 'unknown-api-version', ('', 'ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl011_unknown_api_version', 'Use `apiVersion: trainer.kubeflow.org/v1alpha1`.'),
    ('TL012', 'immutable-field-changed', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl012_immutable_field_changed', 'Keep the field as it is stored, or replace the object instead of updating it.'),
    ('TL013', 'invalid-rendered-pod', ('TrainJob',), (2, 0), None, False, 'tl013_invalid_rendered_pod', 'Change the override, patch or resources so that the merged pod is valid (one source per volume, `value` or `valueFrom` per variable, requests within the limits).'),
    ('TL014', 'duplicate-list-key', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl014_duplicate_list_key', 'Keep one item of each key: merge the two, or remove one.'),
    ('TL090', 'unused-suppression', (), (2, 0), None, False, 'tl090_unused_suppression', 'Remove the code from the suppression (or the whole comment or annotation).'),
    ('TL091', 'invalid-suppression', (), (2, 0), None, False, 'tl091_invalid_suppression', 'Name a rule by its code or name (`trainlint rules` lists them), or fix the syntax.'),
    ('TL101', 'unresolved-runtime-ref', ('TrainJob',), (2, 0), None, False, 'tl101_unresolved_runtime_ref', 'Point `spec.runtimeRef` at a runtime that exists where the TrainJob can see it.'),
    ('TL102', 'runtime-not-among-inputs', ('TrainJob',), (2, 0), None, True, 'tl102_runtime_not_among_inputs', 'Give trainlint the runtime: check it with the TrainJob, or add it with `--context` or `--from-cluster`.'),
    ('TL201', 'trainer-job-missing-ancestor-label', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl201_trainer_job_missing_ancestor_label', 'Add `trainer.kubeflow.org/trainjob-ancestor-step: trainer` to `template.metadata.labels` of the trainer replicatedJob.'),
    ('TL202', 'env-in-pod-overrides', ('TrainJob',), (2, 0), None, False, 'tl202_env_in_pod_overrides', 'Move the variables to `spec.trainer.env` or `spec.initializer.*.env`.'),
    ('TL203', 'runtime-job-replicas-not-one', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl203_runtime_job_replicas_not_one', 'Remove `replicas` (it defaults to 1) and scale with `numNodes` instead.'),
    ('TL204', 'runtime-job-missing-main-container', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 1), None, False, 'tl204_runtime_job_missing_main_container', 'Name the main container of the job after its ancestor step (`node` for `trainer`).'),
    ('TL205', 'deprecated-runtime', ('ClusterTrainingRuntime', 'TrainJob'), (2, 1), None, False, 'tl205_deprecated_runtime', 'Move to a supported runtime before the next Trainer release removes this one.'),
    ('TL206', 'initializer-missing-in-runtime', ('TrainJob',), (2, 0), None, False, 'tl206_initializer_missing_in_runtime', 'Use a runtime with the initializer job, or drop `spec.initializer`.'),
    ('TL207', 'duplicate-override-target', ('TrainJob',), (2, 0), (2, 0), False, 'tl207_duplicate_override_target', 'Merge the `podSpecOverrides` entries that target the same job into one.'),
    ('TL208', 'override-target-not-in-runtime', ('TrainJob',), (2, 0), None, False, 'tl208_override_target_not_in_runtime', 'Target only jobs and containers the runtime defines, by their exact names.'),
    ('TL209', 'runtime-patch-manager-not-domain-prefixed', ('TrainJob',), (2, 2), None, False, 'tl209_runtime_patch_manager_not_domain_prefixed', 'Name the manager `<your domain>/<tool>`, e.g. `example.com/platform-team`.'),
    ('TL210', 'trainjob-name-not-dns-label', ('TrainJob',), (2, 0), (2, 0), False, 'tl210_trainjob_name_not_dns_label', 'Use a lowercase name of at most 63 characters that starts with a letter.'),
    ('TL211', 'invalid-num-proc-per-node', ('TrainJob',), (2, 0), None, False, 'tl211_invalid_num_proc_per_node', "Give `spec.trainer.numProcPerNode` a value the runtime's framework accepts."),
    ('TL212', 'reserved-trainer-env', ('TrainJob',), (2, 0), None, False, 'tl212_reserved_trainer_env', 'Remove the variables: the framework plugin sets them from numNodes and numProcPerNode.'),
    ('TL213', 'torchtune-unsupported-config', ('TrainJob',), (2, 0), None, False, 'tl213_torchtune_unsupported_config', 'Use a model and a node, device and LoRA setup the torchtune runtime supports.'),
    ('TL214', 'torchtune-runtime-managed-arg', ('TrainJob',), (2, 3), None, False, 'tl214_torchtune_runtime_managed_arg', 'Remove the argument: the runtime sets it to match the volumes it mounts.'),
    ('TL215', 'mpi-launcher-as-node-without-jobs', ('TrainJob',), (2, 0), None, False, 'tl215_mpi_launcher_as_node_without_jobs', 'Use a runtime with both a `launcher` and a `node` job, or `numNodes: 1`.'),
    ('TL216', 'reserved-flux-installer', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 2), None, False, 'tl216_reserved_flux_installer', 'Rename the init container: the Flux plugin adds its own `flux-installer`.'),
    ('TL217', 'empty-volcano-queue-name', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 1), None, False, 'tl217_empty_volcano_queue_name', 'Name the Volcano queue, or remove the annotation to use the default queue.'),
    ('TL218', 'env-injection-target-not-in-runtime', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 3), None, False, 'tl218_env_injection_target_not_in_runtime', "Name a job and containers the runtime's template defines."),
    ('TL219', 'overrides-changed-while-running', ('TrainJob',), (2, 0), None, False, 'tl219_overrides_changed_while_running', 'Suspend the TrainJob (`spec.suspend: true`) in the same or an earlier update, then change its overrides or patches.'),
    ('TL220', 'jobset-refuses-template-change', ('TrainJob',), (2, 0), None, False, 'tl220_jobset_refuses_template_change', 'Change only labels, annotations, nodeSelector, tolerations and schedulingGates of a created TrainJob; for anything else, create a new TrainJob.'),
    ('TL221', 'queue-name-changed-while-running', ('TrainJob',), (2, 0), None, False, 'tl221_queue_name_changed_while_running', 'Suspend the TrainJob in the same update (`spec.suspend: true`), or keep its queue.'),
    ('TL250', 'trainer-job-not-named-node', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl250_trainer_job_not_named_node', 'Name the trainer replicatedJob `node`.'),
    ('TL251', 'jobset-network-breaks-rendezvous', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl251_jobset_network_breaks_rendezvous', 'Remove `network.subdomain` and `network.enableDNSHostnames: false` from the runtime.'),
    ('TL252', 'initializer-job-missing-label', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl252_initializer_job_missing_label', 'Label the job template `trainer.kubeflow.org/trainjob-ancestor-step: <job name>`.'),
    ('TL253', 'several-trainer-jobs', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl253_several_trainer_jobs', 'Label exactly one replicatedJob as the trainer.'),
    ('TL254', 'trainjob-without-trainer', ('TrainJob',), (2, 0), None, False, 'tl254_trainjob_without_trainer', 'Add `spec.trainer` (even just `numNodes`) so that the framework variables are set.'),
    ('TL255', 'mpi-runtime-without-node-job', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl255_mpi_runtime_without_node_job', 'Add a replicatedJob named `node` for the MPI workers.'),
    ('TL256', 'resources-per-node-without-ml-policy', ('TrainJob',), (2, 3), None, False, 'tl256_resources_per_node_without_ml_policy', 'Add an `mlPolicy` to the runtime, or set the resources in the runtime itself.'),
    ('TL257', 'partial-resources-per-node', ('TrainJob',), (2, 0), (2, 2), False, 'tl257_partial_resources_per_node', "Repeat the runtime's cpu and memory in `resourcesPerNode`, or upgrade to v2.3+."),
    ('TL258', 'gpu-resource-not-a-count', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 1), None, False, 'tl258_gpu_resource_not_a_count', "Keep one GPU count resource (`nvidia.com/gpu`) among the trainer's resources."),
    ('TL259', 'trainer-job-without-node-container', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), (2, 0), False, 'tl259_trainer_job_without_node_container', "Name the trainer job's main container `node`."),
    ('TL260', 'reserved-env-overwritten', ('TrainJob',), (2, 0), None, False, 'tl260_reserved_env_overwritten', 'Remove the variable: the framework plugin sets it for every node.'),
    ('TL261', 'storage-uri-env-beside-storage-uri', ('TrainJob',), (2, 0), None, False, 'tl261_storage_uri_env_beside_storage_uri', 'Keep `storageUri` and remove the `STORAGE_URI` variable.'),
    ('TL262', 'extended-resource-limit-mismatch', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl262_extended_resource_limit_mismatch', 'Set extended resources such as `nvidia.com/gpu` in `limits` (requests default to them).'),
    ('TL263', 'override-replaces-runtime-list', ('TrainJob',), (2, 0), None, False, 'tl263_override_replaces_runtime_list', "Repeat the runtime's items in the override or patch, or set the list in the runtime."),
    ('TL264', 'container-without-image', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl264_container_without_image', 'Give the container an image in the runtime (or `spec.trainer.image` for the trainer).'),
    ('TL265', 'process-count-from-resources', ('TrainJob',), (2, 0), None, False, 'tl265_process_count_from_resources', 'Set `spec.trainer.numProcPerNode` to the GPUs per node, or put the GPU count in `resourcesPerNode`.'),
    ('TL266', 'invalid-resource-name', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl266_invalid_resource_name', 'Name the resource as the device plugin does (`nvidia.com/gpu`), or use `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`.'),
    ('TL267', 'unresolved-env-reference', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl267_unresolved_env_reference', "Define the variable earlier in the container's `env`, write the value in full, or build it in the container's shell script (`${PATH}`), where the image's variables exist."),
    ('TL270', 'webhook-validation-disabled', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 3), None, True, 'tl270_webhook_validation_disabled', 'Remove the `trainer.kubeflow.org/webhook-validation` label from runtimes you write yourself.'),
    ('TL271', 'two-gang-schedulers', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 1), None, False, 'tl271_two_gang_schedulers', 'Keep one of `podGroupPolicy.coscheduling` and `podGroupPolicy.volcano`.'),
    ('TL272', 'gang-scheduling-without-scheduler-name', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl272_gang_scheduling_without_scheduler_name', "Set `schedulerName` in every replicatedJob's pod template to the gang scheduler."),
    ('TL273', 'multikueue-managed-by-ignored', ('TrainJob',), (2, 0), (2, 2), False, 'tl273_multikueue_managed_by_ignored', 'Upgrade Trainer to v2.3+ before dispatching TrainJobs with MultiKueue.'),
    ('TL274', 'mpi-launcher-as-node-single-node', ('TrainJob',), (2, 0), None, False, 'tl274_mpi_launcher_as_node_single_node', 'Use `numNodes: 2` or more, or a runtime without `runLauncherAsNode` to run on one pod.'),
    ('TL275', 'mpi-launcher-count-from-ml-policy', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl275_mpi_launcher_count_from_ml_policy', 'Keep `mlPolicy.numNodes: 1` in MPI runtimes and set `spec.trainer.numNodes` per TrainJob.'),
    ('TL276', 'npu-nproc-from-cpu-count', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 1), None, False, 'tl276_npu_nproc_from_cpu_count', 'Set `spec.trainer.numProcPerNode` to the NPUs per node.'),
    ('TL277', 'volcano-queue-annotation-ignored', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 1), None, False, 'tl277_volcano_queue_annotation_ignored', "Move the annotation to the runtime's `spec.template.metadata.annotations`, or, per TrainJob, to its runtime patches (`spec.annotations` on v2.1)."),
    ('TL278', 'mpi-workers-miss-trainer-settings', ('TrainJob',), (2, 0), None, False, 'tl278_mpi_workers_miss_trainer_settings', "Use a runtime whose `node` job runs the same image, resources and variables (a runtime per image: `runtimePatches` cannot set a container's image or resources), or set `runLauncherAsNode: true`, with which resources and variables reach it."),
    ('TL279', 'unset-pod-metadata-key', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl279_unset_pod_metadata_key', "Read a key the pod has (`jobset.sigs.k8s.io/jobset-name` holds the TrainJob's name, `jobset.sigs.k8s.io/job-index` the Job's index), or set the label in the pod template."),
    ('TL280', 'pod-selector-on-job-label', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl280_pod_selector_on_job_label', 'Put the label on the pod template (`template.spec.template.metadata.labels`), or select by a label JobSet puts on every pod (`jobset.sigs.k8s.io/jobset-name`, `jobset.sigs.k8s.io/replicatedjob-name`).'),
    ('TL281', 'empty-command-replaces-runtime', ('TrainJob',), (2, 0), None, False, 'tl281_empty_command_replaces_runtime', "Leave out `command` (or `args`) to keep the runtime's, or give the list in full."),
    ('TL282', 'patch-volume-not-mounted', ('TrainJob',), (2, 0), None, False, 'tl282_patch_volume_not_mounted', 'Mount the volume in the container that needs it (its `volumeMounts`, in the same override or patch), or drop it.'),
    ('TL301', 'ephemeral-checkpoint-volume', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl301_ephemeral_checkpoint_volume', 'Mount a PersistentVolumeClaim at the checkpoint directory.'),
    ('TL302', 'rwo-volume-multi-node', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl302_rwo_volume_multi_node', 'Use a ReadWriteMany PersistentVolumeClaim, or train on one node.'),
    ('TL303', 'checkpoint-on-node-local-storage', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl303_checkpoint_on_node_local_storage', 'Put checkpoints on a network StorageClass (NFS, CephFS, a cloud file store).'),
    ('TL304', 'initializer-output-not-shared', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl304_initializer_output_not_shared', 'Mount one PVC (or volumeClaimPolicies template) in the initializer and the trainer.'),
    ('TL305', 'fixed-claim-in-cluster-runtime', ('ClusterTrainingRuntime',), (2, 0), None, False, 'tl305_fixed_claim_in_cluster_runtime', 'Use `volumeClaimPolicies` (v2.2+) for a PVC per TrainJob, or let each TrainJob add its own PVC through its overrides or patches.'),
    ('TL307', 'checkpoint-dir-shared-between-trainjobs', ('TrainJob',), (2, 0), None, False, 'tl307_checkpoint_dir_shared_between_trainjobs', 'Give each TrainJob its own checkpoint directory (`CKPT_DIR` in `spec.trainer.env`).'),
    ('TL308', 'checkpoint-dir-fixed-in-runtime', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl308_checkpoint_dir_fixed_in_runtime', 'Set the checkpoint directory per TrainJob (`CKPT_DIR` in `spec.trainer.env`), or use a `volumeClaimPolicies` PVC per run.'),
    ('TL309', 'claim-not-in-run', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl309_claim_not_in_run', 'Create the PersistentVolumeClaim in the namespace of the TrainJob, or fix `claimName`.'),
    ('TL310', 'pods-share-checkpoint-dir', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl310_pods_share_checkpoint_dir', 'Give each pod its own directory (its completion index in the path), or run one pod.'),
    ('TL401', 'backoff-limit-fights-max-restarts', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl401_backoff_limit_fights_max_restarts', 'Set `backoffLimit: 0` so that `failurePolicy.maxRestarts` alone owns restarts.'),
    ('TL402', 'missing-termination-grace-period', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl402_missing_termination_grace_period', 'Set `terminationGracePeriodSeconds` in the trainer pod template.'),
    ('TL403', 'checkpoint-without-failure-policy', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl403_checkpoint_without_failure_policy', "Add `failurePolicy: {maxRestarts: N}` (with `backoffLimit: 0`) to the runtime's JobSet."),
    ('TL404', 'failure-policy-without-max-restarts', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl404_failure_policy_without_max_restarts', 'Set `failurePolicy.maxRestarts` to the number of restarts a run may use.'),
    ('TL405', 'excessive-max-restarts', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl405_excessive_max_restarts', 'Lower `failurePolicy.maxRestarts`, or raise the `max-restarts` option.'),
    ('TL406', 'restart-needs-feature-gate', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 2), None, False, 'tl406_restart_needs_feature_gate', 'Enable the JobSet alpha feature gate on the cluster, or use `Recreate` and `RestartJobSet`.'),
    ('TL407', 'pod-failure-policy-without-restart-never', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl407_pod_failure_policy_without_restart_never', 'Set `restartPolicy: Never` in the pod template of that job.'),
    ('TL408', 'policy-targets-unknown-job', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl408_policy_targets_unknown_job', 'Name only replicatedJobs of this runtime in `targetReplicatedJobs`.'),
    ('TL409', 'jobset-rejects-policy', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), None, False, 'tl409_jobset_rejects_policy', 'Fix the failure-policy rule or the `dependsOn` the JobSet webhook refuses.'),
    ('TL410', 'pod-name-too-long', ('TrainJob',), (2, 0), None, False, 'tl410_pod_name_too_long', 'Shorten the TrainJob name.'),
    ('TL411', 'ttl-recreates-finished-run', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 1), (2, 3), False, 'tl411_ttl_recreates_finished_run', 'Remove `ttlSecondsAfterFinished`; delete finished TrainJobs instead.'),
    ('TL412', 'active-deadline-counts-queue-time', ('TrainJob',), (2, 2), None, True, 'tl412_active_deadline_counts_queue_time', 'Create the TrainJob with `suspend: true` and resume it when it may start, or allow for the queue time in the deadline.'),
    ('TL413', 'zero-num-nodes', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl413_zero_num_nodes', 'Set `numNodes` to 1 or more; suspend the TrainJob to pause it.'),
    ('TL414', 'default-backoff-limit-multi-node-torch', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, True, 'tl414_default_backoff_limit_multi_node_torch', 'Set `backoffLimit: 0` on the trainer job (and `failurePolicy.maxRestarts` to restart the whole JobSet).'),
    ('TL415', 'in-place-restart-job-requirements', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 2), None, False, 'tl415_in_place_restart_job_requirements', 'Set `backoffLimit: 2147483647` and `podReplacementPolicy: Failed` on every job.'),
    ('TL416', 'jobset-rejects-rendered-jobset', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl416_jobset_rejects_rendered_jobset', 'Fix the `dependsOn`, job name, `groupName`, `coordinator` or `volumeClaimPolicies` the JobSet webhook refuses.'),
    ('TL417', 'command-words-not-split', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl417_command_words_not_split', 'Write each word of the command as an item of its own: `command: [torchrun, train.py]`, or run a shell: `command: [sh, -c, "torchrun train.py"]`.'),
    ('TL418', 'broken-line-continuation', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl418_broken_line_continuation', 'Remove what follows the `\\` on that line: spaces, tabs and comments.'),
    ('TL419', 'container-never-exits', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl419_container_never_exits', 'Run the container as a native sidecar: move it to `initContainers` with `restartPolicy: Always` (Kubernetes 1.29+), which the kubelet stops once the main containers have exited; or make its command exit when the training is done.'),
    ('TL420', 'shell-variable-without-shell', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl420_shell_variable_without_shell', 'Write the reference as Kubernetes expands it, `$(NAME)`, or run the command in a shell: `command: [sh, -c, "torchrun --node-rank $NAME train.py"]`.'),
    ('TL500', 'overwrite-output-dir', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl500_overwrite_output_dir', 'Drop `overwrite_output_dir` so that a restarted run resumes from its checkpoints.'),
    ('TL501', 'resume-from-checkpoint-hard-coded', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl501_resume_from_checkpoint_hard_coded', 'Resume from the newest checkpoint if one exists, else start clean (`resume_from_checkpoint=last or None`).'),
    ('TL502', 'save-steps-without-save-total-limit', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, True, 'tl502_save_steps_without_save_total_limit', 'Add `save_total_limit` (for example 3) next to `save_steps`.'),
    ('TL503', 'torch-elastic-policy-ignored', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 0), (2, 1), False, 'tl503_torch_elastic_policy_ignored', 'Remove `elasticPolicy`; use `numNodes` and the JobSet `failurePolicy.maxRestarts`.'),
    ('TL504', 'empty-mpi-implementation', ('ClusterTrainingRuntime', 'TrainingRuntime'), (2, 1), None, False, 'tl504_empty_mpi_implementation', 'Set `mpiImplementation: OpenMPI`, or leave the field out.'),
    ('TL505', 'unset-rendezvous-variable', ('TrainJob',), (2, 0), None, False, 'tl505_unset_rendezvous_variable', "Use the variables the framework plugin sets in the trainer's container (`$(PET_MASTER_ADDR)`, `$(PET_MASTER_PORT)`, `$(PET_NODE_RANK)`, `$(PET_NNODES)`), or define the variable in the container's `env`."),
    ('TL506', 'xgboost-worker-per-gpu-never-starts', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 2), None, False, 'tl506_xgboost_worker_per_gpu_never_starts', "Start one XGBoost worker per GPU in each pod, each with the rank `DMLC_TASK_ID` × GPUs per node + its GPU's index; or give each pod one GPU."),
    ('TL507', 'torchrun-variables-without-torchrun', ('ClusterTrainingRuntime', 'TrainJob', 'TrainingRuntime'), (2, 0), None, False, 'tl507_torchrun_variables_without_torchrun', "Start the program with `torchrun` (it reads the plugin's `PET_*` variables), as the Kubeflow SDK starts a training function; or read `PET_NODE_RANK`, `PET_NNODES`, `PET_MASTER_ADDR` and `PET_MASTER_PORT` in the program."),
)
# End of what it writes.


def text() -> str:
    """This module's text, `RULES` written from the rules as their modules declare them."""
    from pathlib import Path

    from trainlint.rule import all_rules

    rows = "".join(
        f"    {row!r},\n" for row in (
            (rule.code, rule.name, tuple(sorted(rule.kinds)), rule.since, rule.until,
             rule.preview, rule.check.__module__.rpartition(".")[2], rule.remediation)
            for rule in all_rules().values()
        )
    )
    source = Path(__file__).read_text(encoding="utf-8")
    head, start, rest = source.partition("RULES: tuple[tuple[Any, ...], ...] = (\n")
    _, end, tail = rest.partition(")\n# End of what it writes.\n")
    return f"{head}{start}{rows}{end}{tail}"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    written = Path(sys.argv[1] if len(sys.argv) > 1 else __file__)
    written.write_text(text(), encoding="utf-8")
    print(f"wrote {written}")
