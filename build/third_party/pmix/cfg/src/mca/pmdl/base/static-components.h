/* src/mca/pmdl/base/static-components.h: the pmdl components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_pmdl_ompi_component;
extern const pmix_mca_base_component_t pmix_mca_pmdl_oshmem_component;
const pmix_mca_base_component_t *pmix_mca_pmdl_base_static_components[] = {
    &pmix_mca_pmdl_ompi_component, &pmix_mca_pmdl_oshmem_component, NULL};
