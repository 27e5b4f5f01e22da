// After a batch's items: kernels are kernels again (as kernels_cl/common.cl defines them).
#undef CR_KERNEL
#define CR_KERNEL __kernel
#undef CR_ITEM_ARG
#define CR_ITEM_ARG
#undef CR_WORK_ITEM
#define CR_WORK_ITEM get_global_id(0)
#undef CR_BATCH_ITEM
