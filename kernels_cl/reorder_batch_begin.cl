// Before a batch's items: each item's kernel becomes a function that takes its work-item index (and an item
// that stages through a local tile, its two passes: CR_BATCH_ITEM).
#undef CR_KERNEL
#define CR_KERNEL
#undef CR_ITEM_ARG
#define CR_ITEM_ARG , ulong cr_item
#undef CR_WORK_ITEM
#define CR_WORK_ITEM cr_item
#define CR_BATCH_ITEM
