/* src/mca/bfrops/base/static-components.h: the bfrops components built into lamkit
 * (build/third_party/pmix). */
extern const pmix_mca_base_component_t pmix_mca_bfrops_v20_component;
extern const pmix_mca_base_component_t pmix_mca_bfrops_v21_component;
extern const pmix_mca_base_component_t pmix_mca_bfrops_v3_component;
extern const pmix_mca_base_component_t pmix_mca_bfrops_v4_component;
extern const pmix_mca_base_component_t pmix_mca_bfrops_v41_component;
const pmix_mca_base_component_t *pmix_mca_bfrops_base_static_components[] = {
    &pmix_mca_bfrops_v20_component, &pmix_mca_bfrops_v21_component, &pmix_mca_bfrops_v3_component,
    &pmix_mca_bfrops_v4_component,  &pmix_mca_bfrops_v41_component, NULL};
