// Package train runs training, evaluation and checkpointing of vit-train
// models: configuration layering (defaults → YAML → --set), the training
// loop with its schedule, optimiser, EMA and metrics, and resumable,
// crash-safe checkpoints.
//
// The files, in the order a run meets them:
//
//	config.go      Config: defaults, YAML and --set, validated
//	names.go       the names a setting takes (optim.name, sched.name,
//	               data.dataset, aug.train), each with what it builds
//	datasets.go    the data sets a Config names, their normalisation
//	trainer.go     Run, Options, and the trainer: one run in progress,
//	               its checkpoints saved
//	setup.go       setup: the run folder, resuming, the network, the
//	               batch source, the step, the evaluator, the logs
//	loop.go        the epoch loop, outlined at its top: the path of one
//	               batch from the disk to the optimiser
//	batches.go     BatchSource: the training loader's batches, Mixup and
//	               CutMix or smoothing, the teacher's logits, into the
//	               step's inputs (the loop's and bench's)
//	step.go        Stepper: one optimiser step (forward, backward,
//	               accumulation, clipping, the optimiser, EMA) and the
//	               state a checkpoint keeps of it
//	loss.go        the loss of every run: soft-target cross-entropy, plus
//	               DeiT's distillation term when distilling
//	distributed.go data parallelism: replicas checked, gradients averaged
//	               across ranks (gradAverager)
//	recorder.go    the run's reports: metrics logs, events, progress bar,
//	               printed lines, skipped files
//	hooks.go       Hooks: the callbacks of a program that embeds Run
//	evaluate.go    Evaluate: a graph over a loader, scored (score.go);
//	               the run's end-of-epoch evaluator
//	checkpoint.go  Checkpoint: a run's checkpoint file (train/checkpoint)
//	               with its configuration, and its network (through
//	               NewNetwork, in config.go, the one place model.precision
//	               is applied)
//	preprocess.go  a checkpoint's evaluation preprocessing, resolved once
//	               for every entrance (eval, logits, predict, attention,
//	               the teacher, ONNX)
//	evalsetup.go, logits.go, teacher.go
//	               a checkpoint's network over a data set; a teacher
//	events.go      TensorBoard event files
//	checkdata.go   CheckData: every file of an image folder decoded first
package train
