/* src/mca/pshmem/base/static-components.h: the pshmem components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_pshmem_mmap_component;
const pmix_mca_base_component_t *pmix_mca_pshmem_base_static_components[] = {
    &pmix_mca_pshmem_mmap_component, NULL};
